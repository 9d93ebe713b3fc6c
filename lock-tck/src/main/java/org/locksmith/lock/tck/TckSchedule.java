package org.locksmith.lock.tck;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.MethodDescriptor;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.MethodOrdererContext;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLocksProvider;

/**
 * Which tests of a {@link LockTck} may overlap when JUnit's parallel execution is enabled ({@code
 * junit.jupiter.execution.parallel.enabled=true}): those the kit marks {@link ExecutionMode#CONCURRENT}. Their checks
 * hold under any scheduling: they measure no latency or rate (a bound they check is a fault's, a lease or session
 * long, never a hand-off or a deadline), and they touch only keys, clients and worker processes of their own, through
 * no hook that sees the whole store (no restart, outage, request or connection count). Most of their time is spent
 * waiting for a killed or paused holder's key to free. They share the lock {@value #RESOURCE} for reading; every other
 * test of the class, and any test a subclass adds, takes it for writing, and so runs alone. Without parallel
 * execution JUnit ignores this and runs every test one at a time.
 */
final class TckSchedule implements ResourceLocksProvider {

    /**
     * Marks a concurrent test that spends seconds waiting for a fault's bound: {@link Order} starts these first, so
     * that the quick concurrent tests fill the time around them rather than delay their start.
     */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface LongWait {}

    /**
     * The order of a TCK class's tests: the concurrent ones that wait long, then the other concurrent ones, then the
     * rest, each group by name. JUnit starts concurrent tests in this order, as many at once as its parallelism.
     */
    static final class Order implements MethodOrderer {
        @Override
        public void orderMethods(MethodOrdererContext context) {
            context.getMethodDescriptors()
                    .sort(Comparator.comparingInt((MethodDescriptor d) -> rank(d.getMethod()))
                            .thenComparing(d -> d.getMethod().getName()));
        }

        private static int rank(Method m) {
            if (!concurrent(m)) {
                return 2;
            }
            return m.isAnnotationPresent(LongWait.class) ? 0 : 1;
        }
    }

    private static boolean concurrent(Method m) {
        Execution execution = m.getAnnotation(Execution.class);
        return m.getDeclaringClass() == LockTck.class
                && execution != null
                && execution.value() == ExecutionMode.CONCURRENT;
    }

    /** The resource every test of a TCK class locks: one per JVM, so two TCK classes never overlap either. */
    static final String RESOURCE = "org.locksmith.lock.tck";

    @Override
    public Set<Lock> provideForMethod(List<Class<?>> enclosingInstanceTypes, Class<?> testClass, Method testMethod) {
        return Set.of(
                new Lock(RESOURCE, concurrent(testMethod) ? ResourceAccessMode.READ : ResourceAccessMode.READ_WRITE));
    }
}
