package org.locksmith.lock.cli.internal;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import org.locksmith.lock.Locks;
import org.locksmith.lock.spi.LockProvider;
import org.locksmith.lock.spi.LockUrl;

/** Lock URL handling shared by the commands: finding the provider of a URL and adding parameters to it. */
public final class LockUrls {
    private LockUrls() {}

    /**
     * The provider that {@link Locks#open(String)} would choose for {@code url}.
     *
     * @throws IllegalArgumentException if the URL is malformed or no provider has its scheme, saying what exists
     */
    public static LockProvider providerOf(String url) {
        LockUrl parsed = LockUrl.parse(url);
        return Locks.providers().stream()
                .filter(p -> p.schemes().contains(parsed.scheme()))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no lock backend for " + parsed.scheme()
                        + ":// URLs in this build; it knows "
                        + String.join(
                                ", ",
                                Locks.providers().stream()
                                        .flatMap(p -> p.schemes().stream())
                                        .sorted()
                                        .map(s -> s + "://")
                                        .toList())));
    }

    /** The value of query parameter {@code name} in {@code url}, if set. */
    public static Optional<String> parameter(String url, String name) {
        return Optional.ofNullable(LockUrl.parse(url).parameters().get(name));
    }

    /** {@code url} with {@code name=value} added; the caller checks that it is not set already. */
    public static String with(String url, String name, String value) {
        String pair = name + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8);
        return url + (url.contains("?") ? (url.endsWith("?") || url.endsWith("&") ? "" : "&") : "?") + pair;
    }

    /** Whether the provider of {@code url} understands the parameter {@code name}. */
    public static boolean understands(String url, String name) {
        Set<String> known = providerOf(url).parameters();
        return known.contains(name);
    }
}
