package org.locksmith.lock.tck;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * "Compare semantics in tests": runs the annotated test method once per configured backend, passing a fresh {@link
 * org.locksmith.lock.LockClient} parameter (closed after the invocation). The invocations are named after the
 * backend, so one test shows side by side where backends agree and where they differ.
 *
 * <pre>{@code
 * @LockBackendsTest(sources = {MyRedis.class, MyZooKeeper.class})
 * void waitersTimeOut(LockClient locks) throws Exception {
 *     try (LockLease held = locks.lock("k").acquire(Duration.ofSeconds(1))) { ... }
 * }
 * }</pre>
 *
 * <p>Backends come from {@link #sources()} and from the URLs in the JUnit configuration parameter or system property
 * {@value #URLS_PROPERTY} (separated by whitespace or {@code ;}), each opened with {@link
 * org.locksmith.lock.Locks#open(String)}. With no backend configured the test fails, saying what to set.
 */
@Documented
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@TestTemplate
@ExtendWith(LockBackendsExtension.class)
public @interface LockBackendsTest {

    /** Configuration parameter / system property with backend URLs to compare. */
    String URLS_PROPERTY = "locksmith.compare.urls";

    /** Backends given in code; each class needs a public no-argument constructor. */
    Class<? extends LockClientSource>[] sources() default {};

    /** Whether to add the URLs of {@value #URLS_PROPERTY}. */
    boolean urlsFromProperty() default true;
}
