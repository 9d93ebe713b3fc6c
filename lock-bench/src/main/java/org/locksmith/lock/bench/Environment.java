package org.locksmith.lock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/** What the report says about the machine and the software: cores, CPU, memory, JVM, load, library versions. */
final class Environment {
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
                "JMH " + version("org.openjdk.jmh", "jmh-core") + ", HdrHistogram "
                        + version("org.hdrhistogram", "HdrHistogram") + ", XChart "
                        + version("org.knowm.xchart", "xchart"));
    }

    private static String version(String group, String artifact) {
        String resource = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = Environment.class.getResourceAsStream(resource)) {
            if (in == null) {
                return "?";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "?");
        } catch (IOException e) {
            return "?";
        }
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
