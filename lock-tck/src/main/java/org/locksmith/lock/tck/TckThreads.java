package org.locksmith.lock.tck;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Locale;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;

/**
 * Which threads the TCK uses the client from: {@code platform} (default) or {@code virtual}, chosen with the system
 * property {@value #PROPERTY}. With {@code virtual}, every test body runs on a virtual thread and so does every
 * thread the TCK starts for a client (waiters, contenders, holders), which proves a backend keeps its contracts
 * where interrupting a thread blocked in socket I/O closes the socket. {@code virtual} needs Java 21 or later and
 * fails every test with a message saying so on an older JVM; worker JVMs are not affected.
 *
 * <p>The TCK compiles for Java 17, so it finds {@code Thread.ofVirtual()} by reflection.
 */
public final class TckThreads implements InvocationInterceptor {
    /** The system property naming the kind of threads: {@code platform} or {@code virtual}. */
    public static final String PROPERTY = "locksmith.tck.threads";

    private static final AtomicInteger COUNT = new AtomicInteger();

    /** Used by JUnit through {@link LockTck}'s {@code @ExtendWith}. */
    public TckThreads() {}

    /** True when {@value #PROPERTY} asks for virtual threads. */
    public static boolean virtual() {
        String value = System.getProperty(PROPERTY, "platform").trim().toLowerCase(Locale.ROOT);
        return switch (value) {
            case "platform", "" -> false;
            case "virtual" -> true;
            default ->
                throw new IllegalArgumentException(PROPERTY + " must be platform or virtual, got '" + value + "'");
        };
    }

    /** A thread for {@code task}, of the kind {@value #PROPERTY} names; platform threads are daemons. */
    public static Thread newThread(String name, Runnable task) {
        if (!virtual()) {
            Thread t = new Thread(task, name);
            t.setDaemon(true);
            return t;
        }
        Thread t = virtualFactory().newThread(task);
        t.setName(name);
        return t;
    }

    /** A factory for {@link #newThread} with names {@code prefix-N}. */
    public static ThreadFactory factory(String prefix) {
        return task -> newThread(prefix + "-" + COUNT.incrementAndGet(), task);
    }

    private static ThreadFactory virtualFactory() {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Method factory = Class.forName("java.lang.Thread$Builder").getMethod("factory");
            return (ThreadFactory) factory.invoke(builder);
        } catch (NoSuchMethodException | ClassNotFoundException e) {
            throw new IllegalStateException(
                    PROPERTY + "=virtual needs Java 21 or later; this JVM is Java "
                            + Runtime.version().feature(),
                    e);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("Could not create a virtual thread factory", e);
        }
    }

    /** Runs the test body on a thread of the chosen kind (the JUnit thread for {@code platform}). */
    @Override
    public void interceptTestMethod(
            Invocation<Void> invocation, ReflectiveInvocationContext<Method> method, ExtensionContext context)
            throws Throwable {
        if (!virtual()) {
            invocation.proceed();
            return;
        }
        Throwable[] failure = new Throwable[1];
        Thread body = newThread("tck-body-" + method.getExecutable().getName(), () -> {
            try {
                invocation.proceed();
            } catch (Throwable t) {
                failure[0] = t;
            }
        });
        body.start();
        try {
            body.join();
        } catch (InterruptedException e) {
            // The test's timeout interrupted JUnit's thread: pass it on to the body and report the timeout.
            body.interrupt();
            body.join(5_000);
            throw e;
        }
        if (failure[0] != null) {
            throw failure[0];
        }
    }
}
