package org.locksmith.lock.spi;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A parsed lock URL: {@code scheme://[user[:password]@]host[:port][,host[:port]...][/path][?name=value&...]}.
 * Several hosts are allowed (a ZooKeeper ensemble, a Redis Cluster's seed nodes); IPv6 hosts go in brackets. User,
 * password, path and parameters are percent-decoded. {@link #toString()} hides the password.
 *
 * <p>The typed parameter getters throw {@link IllegalArgumentException} with a message naming the parameter, the
 * value and what is expected, so that providers validate every setting before any I/O.
 */
public final class LockUrl {

    /** One host of a URL; {@code port} is -1 when the URL gives none. */
    public record HostAndPort(String host, int port) {
        /** The port, or {@code defaultPort} if the URL gave none. */
        public int port(int defaultPort) {
            return port < 0 ? defaultPort : port;
        }

        @Override
        public String toString() {
            String h = host.contains(":") ? "[" + host + "]" : host;
            return port < 0 ? h : h + ":" + port;
        }
    }

    private final String scheme;
    private final String user;
    private final String password;
    private final List<HostAndPort> hosts;
    private final String path;
    private final Map<String, String> parameters;

    private LockUrl(
            String scheme,
            String user,
            String password,
            List<HostAndPort> hosts,
            String path,
            Map<String, String> parameters) {
        this.scheme = scheme;
        this.user = user;
        this.password = password;
        this.hosts = List.copyOf(hosts);
        this.path = path;
        this.parameters = Collections.unmodifiableMap(new LinkedHashMap<>(parameters));
    }

    /**
     * Parses {@code url}.
     *
     * @throws NullPointerException if url is null
     * @throws IllegalArgumentException if it is not of the form above, saying what is wrong
     */
    public static LockUrl parse(String url) {
        Objects.requireNonNull(url, "url");
        int schemeEnd = url.indexOf("://");
        if (schemeEnd <= 0) {
            throw invalid(url, "it must start with a scheme such as redis://, zookeeper:// or mysql://");
        }
        String scheme = url.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        if (!scheme.matches("[a-z][a-z0-9+.-]*")) {
            throw invalid(url, "'" + scheme + "' is not a valid scheme");
        }
        String rest = url.substring(schemeEnd + 3);
        String query = "";
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        String path = "";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            path = decode(url, rest.substring(slash + 1));
            rest = rest.substring(0, slash);
        }
        String user = null;
        String password = null;
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = userInfo.indexOf(':');
            if (colon >= 0) {
                user = decode(url, userInfo.substring(0, colon));
                password = decode(url, userInfo.substring(colon + 1));
            } else {
                user = decode(url, userInfo);
            }
            if (user.isEmpty()) {
                user = null;
            }
        }
        List<HostAndPort> hosts = new ArrayList<>();
        if (!rest.isEmpty()) {
            for (String part : rest.split(",", -1)) {
                hosts.add(parseHost(url, part));
            }
        }
        Map<String, String> parameters = new LinkedHashMap<>();
        if (!query.isEmpty()) {
            for (String pair : query.split("&", -1)) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String name = decode(url, eq < 0 ? pair : pair.substring(0, eq));
                String value = eq < 0 ? "" : decode(url, pair.substring(eq + 1));
                if (name.isEmpty()) {
                    throw invalid(url, "a query parameter has no name");
                }
                if (parameters.put(name, value) != null) {
                    throw invalid(url, "parameter '" + name + "' is given twice");
                }
            }
        }
        return new LockUrl(scheme, user, password, hosts, path, parameters);
    }

    private static HostAndPort parseHost(String url, String part) {
        if (part.isEmpty()) {
            throw invalid(url, "a host is empty");
        }
        String host;
        String portText = null;
        if (part.startsWith("[")) {
            int close = part.indexOf(']');
            if (close < 0) {
                throw invalid(url, "IPv6 host '" + part + "' has no closing ]");
            }
            host = part.substring(1, close);
            String after = part.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    throw invalid(url, "unexpected '" + after + "' after host " + part);
                }
                portText = after.substring(1);
            }
        } else {
            int colon = part.lastIndexOf(':');
            if (colon >= 0) {
                host = part.substring(0, colon);
                portText = part.substring(colon + 1);
            } else {
                host = part;
            }
        }
        if (host.isEmpty()) {
            throw invalid(url, "a host is empty");
        }
        int port = -1;
        if (portText != null) {
            try {
                port = Integer.parseInt(portText);
            } catch (NumberFormatException e) {
                throw invalid(url, "port '" + portText + "' is not a number");
            }
            if (port < 1 || port > 65535) {
                throw invalid(url, "port " + port + " is outside 1-65535");
            }
        }
        return new HostAndPort(host, port);
    }

    private static String decode(String url, String text) {
        try {
            return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw invalid(url, "bad percent-encoding in '" + text + "'");
        }
    }

    private static IllegalArgumentException invalid(String url, String why) {
        return new IllegalArgumentException("Invalid lock URL '" + redact(url) + "': " + why);
    }

    private static String redact(String url) {
        return url.replaceFirst("(://[^/@?:]*:)[^/@?]*@", "$1****@");
    }

    public String scheme() {
        return scheme;
    }

    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    public Optional<String> password() {
        return Optional.ofNullable(password);
    }

    /** The hosts in the order given; empty if the URL names none. */
    public List<HostAndPort> hosts() {
        return hosts;
    }

    /** The path without its leading slash, decoded; empty if none. */
    public String path() {
        return path;
    }

    /** All query parameters, decoded, in the order given. */
    public Map<String, String> parameters() {
        return parameters;
    }

    public Optional<String> parameter(String name) {
        return Optional.ofNullable(parameters.get(name));
    }

    public String parameter(String name, String defaultValue) {
        return parameters.getOrDefault(name, defaultValue);
    }

    /**
     * A whole number parameter within [min, max].
     *
     * @throws IllegalArgumentException if present and not a whole number in range
     */
    public long longParameter(String name, long defaultValue, long min, long max) {
        String text = parameters.get(name);
        if (text == null) {
            return defaultValue;
        }
        long value;
        try {
            value = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw badParameter(name, text, "a whole number from " + min + " to " + max);
        }
        if (value < min || value > max) {
            throw badParameter(name, text, "a whole number from " + min + " to " + max);
        }
        return value;
    }

    /** An int parameter within [min, max]; see {@link #longParameter}. */
    public int intParameter(String name, int defaultValue, int min, int max) {
        return (int) longParameter(name, defaultValue, min, max);
    }

    /** A duration given in milliseconds, within [min, max]; see {@link #longParameter}. */
    public Duration millisParameter(String name, Duration defaultValue, Duration min, Duration max) {
        return Duration.ofMillis(longParameter(name, defaultValue.toMillis(), min.toMillis(), max.toMillis()));
    }

    /** {@code true} or {@code false}, case-insensitive. */
    public boolean booleanParameter(String name, boolean defaultValue) {
        String text = parameters.get(name);
        if (text == null) {
            return defaultValue;
        }
        if (text.equalsIgnoreCase("true")) {
            return true;
        }
        if (text.equalsIgnoreCase("false")) {
            return false;
        }
        throw badParameter(name, text, "true or false");
    }

    private IllegalArgumentException badParameter(String name, String value, String expected) {
        return new IllegalArgumentException(
                "Lock URL " + this + ": parameter " + name + "='" + value + "' must be " + expected);
    }

    /** The URL with its password replaced by {@code ****}. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(scheme).append("://");
        if (user != null || password != null) {
            s.append(user == null ? "" : user);
            if (password != null) {
                s.append(":****");
            }
            s.append('@');
        }
        for (int i = 0; i < hosts.size(); i++) {
            s.append(i == 0 ? "" : ",").append(hosts.get(i));
        }
        if (!path.isEmpty()) {
            s.append('/').append(path);
        }
        if (!parameters.isEmpty()) {
            s.append('?');
            boolean first = true;
            for (Map.Entry<String, String> e : parameters.entrySet()) {
                s.append(first ? "" : "&").append(e.getKey()).append('=').append(e.getValue());
                first = false;
            }
        }
        return s.toString();
    }
}
