package org.locksmith.lock.tck;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.locksmith.lock.LockFeature;
import org.locksmith.lock.tck.internal.TckEnv;

/**
 * The gates a {@link LockTck} test declares by annotation, checked at the start of its body (on the body's thread,
 * after {@link TckThreads}) in a fixed order: {@link RequiresFeature} (in the order given), {@link
 * ChecksUndeclared}, {@link RequiresFault}, {@link RequiresHook}; then the body, which may gate further in code
 * (gates whose outcome depends on another, or that hand back a value the test uses). A gate that is not met aborts
 * the test with the reason {@link TckEnv}'s {@code require...} methods give, so that the report classifies the skip
 * as before: {@code not declared: FEATURE}, {@code declared: FEATURE (...)}, {@code needs ...}.
 */
final class TckGates implements InvocationInterceptor {

    /** The test checks a feature: skipped as {@code not declared: FEATURE} unless the client declares each one. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface RequiresFeature {
        LockFeature[] value();
    }

    /**
     * The test checks the side without a feature: skipped as {@code declared: FEATURE (this test checks the side
     * without it)} if the client declares it.
     */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface ChecksUndeclared {
        LockFeature value();
    }

    /** The test inflicts a fault: skipped as {@code needs fault FAULT (...)} unless {@code faults()} offers it. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface RequiresFault {
        LockFaults.Fault value();
    }

    /** A store-view hook the test reads: skipped as {@code needs HOOK (it is empty)} while it answers empty. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface RequiresHook {
        Hook value();
    }

    /** The store-view hooks of {@link LockTck}. */
    enum Hook {
        STORE_ENTRIES,
        OPEN_CONNECTIONS,
        STORE_OPERATIONS
    }

    @Override
    public void interceptTestMethod(
            Invocation<Void> invocation, ReflectiveInvocationContext<Method> method, ExtensionContext context)
            throws Throwable {
        if (context.getTestInstance().orElse(null) instanceof LockTck tck && tck.env() != null) {
            check(method.getExecutable(), tck.env());
        }
        invocation.proceed();
    }

    static void check(Method test, TckEnv env) {
        RequiresFeature features = test.getAnnotation(RequiresFeature.class);
        if (features != null) {
            for (LockFeature f : features.value()) {
                env.requireFeature(f);
            }
        }
        ChecksUndeclared undeclared = test.getAnnotation(ChecksUndeclared.class);
        if (undeclared != null) {
            env.requireUndeclared(undeclared.value());
        }
        RequiresFault fault = test.getAnnotation(RequiresFault.class);
        if (fault != null) {
            env.requireFault(fault.value());
        }
        RequiresHook hook = test.getAnnotation(RequiresHook.class);
        if (hook != null) {
            switch (hook.value()) {
                case STORE_ENTRIES -> env.requireStoreEntries(env.key("gate"));
                case OPEN_CONNECTIONS -> env.requireOpenConnections();
                case STORE_OPERATIONS -> env.requireStoreOperations();
            }
        }
    }
}
