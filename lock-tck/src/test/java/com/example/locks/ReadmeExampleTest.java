package com.example.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/writing-a-backend.md shows the worked example verbatim, so the example a reader copies is the one this build
 * runs.
 */
class ReadmeExampleTest {
    private static final Path EXAMPLE = Path.of("src/test/java/com/example/locks");
    private static final Path GUIDE = Path.of("..", "docs", "writing-a-backend.md");

    @Test
    void readmeShowsTheCompiledExampleVerbatim() throws IOException {
        String readme = Files.readString(GUIDE, StandardCharsets.UTF_8);
        for (String file : new String[] {"InMemoryLockBackend.java", "InMemoryLockBackendTckTest.java"}) {
            String source = Files.readString(EXAMPLE.resolve(file), StandardCharsets.UTF_8)
                    .strip();
            assertThat(readme)
                    .as("%s must show %s exactly as compiled; copy it again after changing it", GUIDE, file)
                    .contains("```java\n" + source + "\n```");
        }
    }

    /** The JUnit engine the guides tell users to add is the one this build compiles the TCK against. */
    @Test
    void readmesNameTheBuildsJUnitVersion() throws IOException {
        String pom = Files.readString(Path.of("..", "pom.xml"), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("<junit.version>([^<]+)</junit.version>").matcher(pom);
        assertThat(m.find()).as("root pom.xml defines junit.version").isTrue();
        String engine = "<artifactId>junit-jupiter-engine</artifactId>\n  <version>" + m.group(1) + "</version>";
        for (Path readme : new Path[] {GUIDE, Path.of("README.md")}) {
            assertThat(Files.readString(readme, StandardCharsets.UTF_8))
                    .as("%s must add junit-jupiter-engine %s, the root pom's junit.version", readme, m.group(1))
                    .contains(engine);
        }
    }
}
