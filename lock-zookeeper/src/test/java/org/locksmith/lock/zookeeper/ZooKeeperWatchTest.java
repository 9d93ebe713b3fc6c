package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.zookeeper.internal.LockNodes;

/** The recipe's watches: none lost at a grant, none left behind by attempts that give up. */
class ZooKeeperWatchTest {
    private static EmbeddedZooKeeper server;
    private static CuratorFramework admin;
    private static String root;
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        server = new EmbeddedZooKeeper();
        admin = ZooKeeperTestSupport.admin(server.connectString());
        root = ZooKeeperTestSupport.uniqueRoot("watch");
    }

    @AfterAll
    static void stop() throws Exception {
        admin.close();
        server.close();
    }

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close(); // clients before the Curator clients they use
        }
    }

    private static String path(String key) {
        return root + "/" + LockNodes.encodeKey(key);
    }

    private CuratorFramework curator() {
        CuratorFramework curator = ZooKeeperTestSupport.admin(server.connectString());
        closeables.add(curator);
        return curator;
    }

    /**
     * The granting {@code getChildren} arms the child watch by which a holder learns that its node was deleted
     * behind its back. Another attempt's create can fire it in the instant between that call's reply and the node
     * being held; the holder must still learn of a later deletion.
     */
    @Test
    void aChildWatchFiredJustBeforeTheGrantDoesNotBlindTheHolder() throws Exception {
        String parent = path("blind");
        AtomicBoolean first = new AtomicBoolean(true);
        String[] intruder = new String[1];
        CuratorFramework curator = afterGetChildren(curator(), path -> {
            if (path.equals(parent) && first.compareAndSet(true, true) && first.getAndSet(false)) {
                try {
                    // another client queues behind us, firing our child watch; give the event time to arrive
                    intruder[0] = admin.create()
                            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                            .forPath(parent + "/_c_00-intruder-");
                    Thread.sleep(300);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        });
        LockClient client = ZooKeeperLocks.using(curator, root);
        closeables.add(client);
        List<String> lost = new CopyOnWriteArrayList<>();
        LockLease lease = client.lock("blind").acquire(Duration.ofSeconds(5));
        lease.onLost(cause -> lost.add(String.valueOf(cause)));
        assertThat(intruder[0]).as("the hook ran").isNotNull();

        for (String child : ZooKeeperTestSupport.children(admin, parent)) {
            if (!intruder[0].endsWith(child)) {
                admin.delete().forPath(parent + "/" + child); // the holder's node, as an operator might
            }
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> !lease.isValid());
        assertThat(lost).hasSize(1);
    }

    /**
     * A client whose {@code getChildren(...).forPath(path)} runs {@code hook} with the path after the reply came
     * and before it returns to the backend: a way into the instant between a reply and what the backend does next.
     */
    private static CuratorFramework afterGetChildren(CuratorFramework real, Consumer<String> hook) {
        return (CuratorFramework) Proxy.newProxyInstance(
                ZooKeeperWatchTest.class.getClassLoader(),
                new Class<?>[] {CuratorFramework.class},
                (proxy, method, args) -> {
                    Object result = invoke(method, real, args);
                    return method.getName().equals("getChildren") ? chain(result, hook) : result;
                });
    }

    /** {@code target} behind a proxy of all its interfaces (generic builder methods return erased types). */
    private static Object chain(Object target, Consumer<String> hook) {
        InvocationHandler handler = (proxy, method, args) -> {
            Object result = invoke(method, target, args);
            if (method.getName().equals("forPath")) {
                hook.accept((String) args[0]);
                return result;
            }
            return result != null && !(result instanceof List) && interfaces(result.getClass()).length > 0
                    ? chain(result, hook)
                    : result;
        };
        return Proxy.newProxyInstance(
                ZooKeeperWatchTest.class.getClassLoader(), interfaces(target.getClass()), handler);
    }

    private static Class<?>[] interfaces(Class<?> type) {
        Set<Class<?>> all = new LinkedHashSet<>();
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            all.addAll(Arrays.asList(c.getInterfaces()));
        }
        return all.toArray(new Class<?>[0]);
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
