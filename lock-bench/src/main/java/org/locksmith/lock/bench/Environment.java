package org.locksmith.lock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Properties;
import java.util.jar.Manifest;

/** What the report says about the machine and the software: cores, CPU, memory, JVM, load, library versions. */
public final class Environment {
    private Environment() {}

    static List<String> machine() {
        List<String> lines = new ArrayList<>();
        lines.add(Runtime.getRuntime().availableProcessors() + " cores: " + firstLine("/proc/cpuinfo", "model name"));
        lines.add("memory: " + firstLine("/proc/meminfo", "MemTotal"));
        lines.add("OS: " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
                + System.getProperty("os.arch") + ")");
        lines.add("JVM: " + System.getProperty("java.vm.name") + " " + Runtime.version() + " (S1 forks get -Xmx512m)");
        return lines;
    }

    /** The 1/5/15-minute load averages, to judge how noisy the run was. */
    static String load() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " / " + parts[1] + " / " + parts[2];
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** Versions of the libraries compared, from the Maven metadata in their jars. */
    static List<String> libraries() {
        return List.of(
                "Locksmith " + version("org.locksmith", "lock-api") + " (Jedis " + version("redis.clients", "jedis")
                        + ", Curator " + version("org.apache.curator", "curator-framework") + ", HikariCP "
                        + version("com.zaxxer", "HikariCP") + ")",
                "Redisson " + version("org.redisson", "redisson"),
                "Spring Integration " + version("org.springframework.integration", "spring-integration-redis")
                        + " (spring-data-redis " + version("org.springframework.data", "spring-data-redis")
                        + ", Lettuce " + version("io.lettuce", "lettuce-core") + ")",
                "Apache Curator " + version("org.apache.curator", "curator-recipes") + " (ZooKeeper client "
                        + version("org.apache.zookeeper", "zookeeper") + ")",
                "MySQL Connector/J " + version("com.mysql", "mysql-connector-j"),
                "PostgreSQL JDBC driver " + version("org.postgresql", "postgresql"),
                "ShedLock " + version("net.javacrumbs.shedlock", "shedlock-core") + " (shedlock-provider-jdbc-template "
                        + version("net.javacrumbs.shedlock", "shedlock-provider-jdbc-template") + ", spring-jdbc "
                        + version("org.springframework", "spring-jdbc") + ")",
                "JMH " + version("org.openjdk.jmh", "jmh-core") + ", HdrHistogram "
                        + version("org.hdrhistogram", "HdrHistogram") + ", XChart "
                        + version("org.knowm.xchart", "xchart"));
    }

    /**
     * The version of {@code group:artifact} on the class path: from the Maven metadata in its jar, else from its
     * manifest's {@code Implementation-Version}, else from the jar's file name, {@code artifact-version.jar}; "?" if
     * none is found.
     */
    public static String version(String group, String artifact) {
        String resource = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = Environment.class.getResourceAsStream(resource)) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                String v = p.getProperty("version");
                if (v != null) {
                    return v;
                }
            }
        } catch (IOException e) {
            // fall through to the file name
        }
        // The jar's manifest (Spring's and Connector/J's jars carry no Maven metadata but an Implementation-Version),
        // found through the class loader whatever the class path looks like.
        try {
            Enumeration<URL> manifests = Environment.class.getClassLoader().getResources("META-INF/MANIFEST.MF");
            while (manifests.hasMoreElements()) {
                URL url = manifests.nextElement();
                String path = url.getPath();
                int bang = path.indexOf("!/");
                if (bang < 0) {
                    continue;
                }
                String jar = path.substring(path.lastIndexOf('/', bang) + 1, bang);
                if (jar.startsWith(artifact + "-") && jar.endsWith(".jar")) {
                    try (InputStream in = url.openStream()) {
                        String v = new Manifest(in).getMainAttributes().getValue("Implementation-Version");
                        if (v != null && !v.isBlank()) {
                            return v;
                        }
                    }
                }
            }
        } catch (IOException e) {
            // fall through to the file name
        }
        // Under Surefire the JVM's own class path is a launcher jar; the test class path is in its own property.
        for (String property : List.of("surefire.test.class.path", "java.class.path")) {
            String classPath = System.getProperty(property, "");
            for (String entry : classPath.split(java.io.File.pathSeparator)) {
                String name = Path.of(entry).getFileName() == null
                        ? ""
                        : Path.of(entry).getFileName().toString();
                String prefix = artifact + "-";
                if (name.startsWith(prefix) && name.endsWith(".jar")) {
                    String v = name.substring(prefix.length(), name.length() - ".jar".length());
                    if (!v.isEmpty() && Character.isDigit(v.charAt(0))) {
                        return v;
                    }
                }
            }
        }
        return "?";
    }

    private static String firstLine(String file, String prefix) {
        try {
            return Files.readAllLines(Path.of(file)).stream()
                    .filter(l -> l.startsWith(prefix))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst()
                    .orElse("unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
