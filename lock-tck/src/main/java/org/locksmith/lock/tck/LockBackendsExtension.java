package org.locksmith.lock.tck;

import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;
import org.junit.platform.commons.support.AnnotationSupport;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.Locks;

/** The engine of {@link LockBackendsTest}: one invocation per configured backend, a fresh client for each. */
final class LockBackendsExtension implements TestTemplateInvocationContextProvider {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(LockBackendsExtension.class);

    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return AnnotationSupport.isAnnotated(context.getTestMethod(), LockBackendsTest.class);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        LockBackendsTest config = AnnotationSupport.findAnnotation(context.getTestMethod(), LockBackendsTest.class)
                .orElseThrow();
        List<LockClientSource> sources = new ArrayList<>();
        for (Class<? extends LockClientSource> type : config.sources()) {
            sources.add(instantiate(type));
        }
        if (config.urlsFromProperty()) {
            String urls = context.getConfigurationParameter(LockBackendsTest.URLS_PROPERTY)
                    .orElse(System.getProperty(LockBackendsTest.URLS_PROPERTY, ""));
            for (String url : urls.trim().split("[\\s;]+")) {
                if (!url.isBlank()) {
                    sources.add(new UrlSource(url));
                }
            }
        }
        if (sources.isEmpty()) {
            throw new ExtensionConfigurationException("@LockBackendsTest on " + context.getDisplayName()
                    + " has no backend to run against: list LockClientSource classes in sources(), or set the "
                    + "system property / JUnit configuration parameter " + LockBackendsTest.URLS_PROPERTY
                    + " to lock URLs separated by ';' (for example redis://127.0.0.1:6379;zookeeper://127.0.0.1:2181)");
        }
        return sources.stream().map(Invocation::new);
    }

    private static LockClientSource instantiate(Class<? extends LockClientSource> type) {
        try {
            Constructor<? extends LockClientSource> c = type.getDeclaredConstructor();
            c.setAccessible(true);
            return c.newInstance();
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new ExtensionConfigurationException(
                    "LockClientSource " + type.getName() + " needs a no-argument constructor that works: " + e, e);
        }
    }

    /** A backend named by URL. */
    private record UrlSource(String url) implements LockClientSource {
        @Override
        public LockClient open() {
            return Locks.open(url);
        }

        @Override
        public String name() {
            return url.replaceFirst("(://[^/@?:]*:)[^/@?]*@", "$1****@");
        }
    }

    /** One invocation: names itself after the backend and resolves the LockClient parameter. */
    private static final class Invocation implements TestTemplateInvocationContext {
        private final LockClientSource source;

        Invocation(LockClientSource source) {
            this.source = source;
        }

        @Override
        public String getDisplayName(int invocationIndex) {
            return "[" + invocationIndex + "] " + source.name();
        }

        @Override
        public List<Extension> getAdditionalExtensions() {
            return List.of(new ParameterResolver() {
                @Override
                public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
                    return p.getParameter().getType() == LockClient.class;
                }

                @Override
                public Object resolveParameter(ParameterContext p, ExtensionContext e) {
                    // Stored as an AutoCloseable: JUnit closes it when this invocation ends.
                    return e.getStore(NS)
                            .getOrComputeIfAbsent("client", k -> new Opened(source.open()), Opened.class)
                            .client();
                }
            });
        }
    }

    private record Opened(LockClient client) implements AutoCloseable {
        @Override
        public void close() {
            client.close();
        }
    }
}
