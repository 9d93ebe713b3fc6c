package org.locksmith.lock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.testservers.EmbeddedZooKeeper;
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
        CuratorFramework real = curator();
        CuratorFramework curator = afterGetChildren(real, path -> {
            if (path.equals(parent) && first.getAndSet(false)) {
                try {
                    // Another client queues behind us, firing our child watch. One ZooKeeper handle delivers its
                    // events in order: once this handle has seen the marker created after the intruder, the
                    // backend has seen the intruder.
                    String marker = parent + "-marker";
                    CountDownLatch delivered = new CountDownLatch(1);
                    real.checkExists()
                            .usingWatcher((Watcher) e -> delivered.countDown())
                            .forPath(marker);
                    intruder[0] = admin.create()
                            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                            .forPath(parent + "/_c_00-intruder-");
                    admin.create().forPath(marker);
                    assertThat(delivered.await(5, TimeUnit.SECONDS)).isTrue();
                    admin.delete().forPath(marker);
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
     * An attempt that gives up (deadline, interrupt) leaves no watch on its predecessor in the ZooKeeper client:
     * {@code acquire(timeout)} polling a key held for days must not grow the client's memory without bound.
     */
    @Test
    void attemptsThatGiveUpLeaveNoWatchBehind() throws Exception {
        CuratorFramework curator = curator();
        LockClient holder = ZooKeeperLocks.using(curator(), root);
        LockClient poller = ZooKeeperLocks.using(curator, root);
        closeables.add(holder);
        closeables.add(poller);
        try (LockLease held = holder.lock("leak").acquire(Duration.ofSeconds(5))) {
            int before = clientWatches(curator);
            for (int i = 0; i < 100; i++) {
                assertThatThrownBy(() -> poller.lock("leak").acquire(Duration.ofMillis(15)))
                        .isInstanceOf(LockTimeoutException.class);
            }
            Thread waiter = new Thread(() -> {
                try {
                    poller.lock("leak").acquire(Duration.ofSeconds(30));
                } catch (InterruptedException expected) {
                    // given up
                }
            });
            for (int i = 0; i < 10; i++) {
                Thread t = new Thread(waiter);
                t.start();
                await().atMost(Duration.ofSeconds(5))
                        .until(() -> ZooKeeperTestSupport.children(admin, path("leak"))
                                        .size()
                                == 2);
                t.interrupt();
                t.join(5_000);
            }
            assertThat(clientWatches(curator) - before)
                    .as("watches the attempts left in the ZooKeeper client")
                    .isLessThanOrEqualTo(1);
            assertThat(held.isValid()).isTrue();
        }
    }

    /** Watches registered in a Curator client's ZooKeeper handle (data, exists and child), counted per watcher. */
    private static int clientWatches(CuratorFramework curator) throws Exception {
        ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
        Method getManager = ZooKeeper.class.getDeclaredMethod("getWatchManager");
        getManager.setAccessible(true);
        Object manager = getManager.invoke(zk);
        int count = 0;
        for (String kind : new String[] {"getDataWatches", "getExistWatches", "getChildWatches"}) {
            Method get = manager.getClass().getDeclaredMethod(kind);
            get.setAccessible(true);
            @SuppressWarnings("unchecked")
            Map<String, Set<?>> watches = (Map<String, Set<?>>) get.invoke(manager);
            synchronized (watches) {
                for (Set<?> watchers : watches.values()) {
                    count += watchers.size();
                }
            }
        }
        return count;
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
