package org.locksmith.lock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.locksmith.lock.internal.CoreLockClient;
import org.locksmith.lock.spi.LockBackend;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;

/**
 * The entry point: opens a {@link LockClient} for a URL, choosing the backend by the URL's scheme among the {@link
 * LockProvider}s on the class path (or module path), the way {@code DriverManager} chooses a JDBC driver. Swapping
 * the backend is swapping a jar and a URL.
 *
 * <pre>{@code
 * try (LockClient locks = Locks.open("redis://127.0.0.1:6379?leaseMs=30000")) {
 *     try (LockLease lease = locks.lock("orders:42").acquire(Duration.ofSeconds(5))) {
 *         long token = lease.fencingToken();
 *         ...
 *     }
 * }
 * }</pre>
 */
public final class Locks {

    /** The longest key, in UTF-16 chars, that every backend accepts. */
    public static final int MAX_KEY_LENGTH = 1024;

    /** The system property {@link #open()} reads first. */
    public static final String URL_PROPERTY = "locksmith.url";

    /** The environment variable {@link #open()} reads when the system property is not set. */
    public static final String URL_ENVIRONMENT_VARIABLE = "LOCKSMITH_URL";

    private Locks() {}

    /**
     * Opens a client for {@code url}, whose scheme selects the provider and whose query parameters configure it.
     *
     * @throws NullPointerException if url is null
     * @throws IllegalArgumentException if the URL is malformed, no provider on the class path has its scheme (the
     *     message lists the providers found), or it has a parameter the provider does not know (the message lists
     *     those it knows) or a bad value; all before any I/O
     * @throws LockBackendException if the store cannot be reached within the configured timeout
     */
    public static LockClient open(String url) {
        Objects.requireNonNull(url, "url");
        LockUrl parsed = LockUrl.parse(url);
        List<LockProvider> providers = providers();
        LockProvider provider = providers.stream()
                .filter(p -> p.schemes().contains(parsed.scheme()))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("No lock provider for scheme '"
                        + parsed.scheme()
                        + "' in "
                        + parsed
                        + ". Found: "
                        + describe(providers)
                        + ". Add the backend's jar (for example org.locksmith:lock-redis) to the class path."));
        requireKnownParameters(provider, parsed);
        return client(provider.open(parsed));
    }

    /**
     * Opens a client on {@code connection}, a connection object the application made and owns (its {@code
     * DataSource}, {@code UnifiedJedis}, {@code CuratorFramework}), with the lock settings in {@code url}'s query
     * parameters; the scheme selects the provider as in {@link #open(String)}. See {@link #open(LockProvider,
     * LockUrl, Supplier)} for what is checked. The client does not close {@code connection}.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the URL is malformed, no provider has its scheme, the provider cannot open
     *     a client on an application's connection or not on one of {@code connection}'s type, or a parameter is
     *     unknown, only configures connections, or has a bad value; all before any I/O
     * @throws LockBackendException if the store cannot be reached through {@code connection}
     */
    public static LockClient open(String url, Object connection) {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(connection, "connection");
        LockUrl parsed = LockUrl.parse(url);
        List<LockProvider> providers = providers();
        LockProvider provider = providers.stream()
                .filter(p -> p.schemes().contains(parsed.scheme()))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("No lock provider for scheme '" + parsed.scheme()
                        + "' in " + parsed + ". Found: " + describe(providers)
                        + ". Add the backend's jar (for example org.locksmith:lock-redis) to the class path."));
        return open(provider, parsed, () -> connection);
    }

    /**
     * Opens a client through {@code provider} on an application's connection object (see {@link
     * LockProvider#openClient(LockUrl, Object)}), after checking, in this order and before any I/O: that the
     * provider has {@code url}'s scheme and an {@linkplain LockProvider#applicationConnectionType() application
     * connection type}; that every parameter of {@code url} is one it {@linkplain LockProvider#parameters() knows}
     * and one that {@linkplain LockProvider#applicationConnectionParameters() applies} on an application's
     * connection (a parameter that only configures connections is an error naming it and listing those that
     * apply); then that the object {@code connection} supplies, asked for only now, is of that type.
     *
     * @param connection supplies the application's connection object; called once, only if the URL passed the
     *     checks, so an object made on demand is not made for a wrong URL
     * @throws NullPointerException if an argument, or the object supplied, is null
     * @throws IllegalArgumentException if a check fails, or the provider finds a bad value
     * @throws LockBackendException if the store cannot be reached through the connection
     */
    public static LockClient open(LockProvider provider, LockUrl url, Supplier<?> connection) {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(connection, "connection");
        if (!provider.schemes().contains(url.scheme())) {
            throw new IllegalArgumentException("Lock provider '" + provider.name() + "' opens "
                    + String.join(", ", new TreeSet<>(provider.schemes())) + " URLs, not " + url);
        }
        Class<?> type = provider.applicationConnectionType()
                .orElseThrow(() -> new IllegalArgumentException("Lock provider '" + provider.name() + "' ("
                        + provider.getClass().getName() + ") cannot open a client on an application's connection,"
                        + " only from a URL such as " + url.scheme() + "://host (" + url + ")"));
        requireKnownParameters(provider, url);
        Set<String> applicable = new TreeSet<>(provider.applicationConnectionParameters());
        Set<String> wrong = new TreeSet<>(url.parameters().keySet());
        wrong.removeAll(applicable);
        if (!wrong.isEmpty()) {
            throw new IllegalArgumentException("Lock URL " + url + ": " + String.join(", ", wrong)
                    + (wrong.size() == 1 ? " does" : " do") + " not apply on the application's "
                    + type.getSimpleName() + ", which makes the connections; set it on that "
                    + type.getSimpleName() + ", or remove it. Parameters that apply: "
                    + (applicable.isEmpty() ? "none" : String.join(", ", applicable)));
        }
        Object supplied = Objects.requireNonNull(connection.get(), "the connection supplied is null");
        if (!type.isInstance(supplied)) {
            throw new IllegalArgumentException("Lock provider '" + provider.name() + "' opens clients on a "
                    + type.getName() + ", not on a " + supplied.getClass().getName() + " (" + url + ")");
        }
        return provider.openClient(url, supplied);
    }

    /**
     * The provider for {@code scheme} among those that {@code loader} sees through {@link ServiceLoader}, or empty.
     * A provider registered in a jar whose class {@code loader} cannot load (as when a class loader hides a
     * backend) counts as absent.
     *
     * @throws NullPointerException if an argument is null
     */
    public static Optional<LockProvider> provider(String scheme, ClassLoader loader) {
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(loader, "loader");
        java.util.Iterator<LockProvider> it =
                ServiceLoader.load(LockProvider.class, loader).iterator();
        // ServiceLoader's recovery after an error is best effort: stop after as many errors as any class path has
        for (int failures = 0; failures < 1_000; ) {
            LockProvider p;
            try {
                if (!it.hasNext()) {
                    return Optional.empty();
                }
                p = it.next();
            } catch (ServiceConfigurationError e) {
                failures++; // this one cannot be loaded here; the iterator goes on with the next
                continue;
            }
            if (p.schemes().contains(scheme)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /**
     * Opens a client for the URL in the system property {@value #URL_PROPERTY}, else the environment variable
     * {@value #URL_ENVIRONMENT_VARIABLE}; with neither set, for the default URL of the only provider on the class
     * path.
     *
     * @throws IllegalStateException if no URL is set and there is not exactly one provider; the message lists the
     *     providers found and what to set
     * @see #open(String)
     */
    public static LockClient open() {
        String url = System.getProperty(URL_PROPERTY);
        if (url == null || url.isBlank()) {
            url = System.getenv(URL_ENVIRONMENT_VARIABLE);
        }
        if (url != null && !url.isBlank()) {
            return open(url.trim());
        }
        return open(onlyProvider(providers()).defaultUrl());
    }

    static LockProvider onlyProvider(List<LockProvider> providers) {
        if (providers.size() != 1) {
            throw new IllegalStateException((providers.isEmpty()
                            ? "No lock provider on the class path. Add a backend such as org.locksmith:lock-redis"
                            : "Several lock providers on the class path (" + describe(providers) + ")")
                    + ", and no URL is set: set the system property "
                    + URL_PROPERTY
                    + " or the environment variable "
                    + URL_ENVIRONMENT_VARIABLE
                    + " (for example redis://127.0.0.1:6379), or call Locks.open(url).");
        }
        return providers.get(0);
    }

    /**
     * The providers visible to the thread's context class loader and to this class's loader, sorted by name.
     *
     * @throws IllegalStateException if a registered provider cannot be loaded, naming it
     */
    public static List<LockProvider> providers() {
        Map<String, LockProvider> byClass = new java.util.LinkedHashMap<>();
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        for (ClassLoader loader : new ClassLoader[] {context, Locks.class.getClassLoader()}) {
            try {
                for (LockProvider p : ServiceLoader.load(LockProvider.class, loader)) {
                    byClass.putIfAbsent(p.getClass().getName(), p);
                }
            } catch (ServiceConfigurationError e) {
                throw new IllegalStateException("A lock provider could not be loaded: " + e.getMessage(), e);
            }
        }
        List<LockProvider> list = new ArrayList<>(byClass.values());
        list.sort(Comparator.comparing(LockProvider::name));
        return List.copyOf(list);
    }

    /**
     * Wraps a backend in the shared core (reentrancy, deadlines, interruption, renewal, loss detection, key
     * checks). For backend authors: their factories ({@code RedisLocks.using(...)}) and providers end here.
     * The client owns the backend and closes it.
     *
     * @throws IllegalArgumentException if the backend's declarations contradict each other (see {@link
     *     LockBackend#leaseTime()} and {@link LockBackend#renewInterval()}); the message names the backend and
     *     what to fix, and the backend is closed
     * @throws NullPointerException if backend is null
     */
    public static LockClient client(LockBackend backend) {
        return new CoreLockClient(Objects.requireNonNull(backend, "backend"));
    }

    private static void requireKnownParameters(LockProvider provider, LockUrl parsed) {
        Set<String> unknown = new TreeSet<>(parsed.parameters().keySet());
        unknown.removeAll(provider.parameters());
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("Unknown parameter"
                    + (unknown.size() > 1 ? "s " : " ")
                    + unknown
                    + " in lock URL "
                    + parsed
                    + "; provider '"
                    + provider.name()
                    + "' knows "
                    + new TreeSet<>(provider.parameters()));
        }
    }

    private static String describe(List<LockProvider> providers) {
        if (providers.isEmpty()) {
            return "none";
        }
        return providers.stream()
                .map(p -> p.name() + " (" + String.join(", ", new TreeSet<>(p.schemes())) + "://, "
                        + p.getClass().getName() + ")")
                .collect(Collectors.joining("; "));
    }
}
