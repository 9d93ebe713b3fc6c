package com.example.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The root README shows the worked example verbatim, so the example a reader copies is the one this build runs. */
class ReadmeExampleTest {
    private static final Path EXAMPLE = Path.of("src/test/java/com/example/locks");

    @Test
    void readmeShowsTheCompiledExampleVerbatim() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        for (String file : new String[] {"InMemoryLockBackend.java", "InMemoryLockBackendTckTest.java"}) {
            String source = Files.readString(EXAMPLE.resolve(file), StandardCharsets.UTF_8)
                    .strip();
            assertThat(readme)
                    .as("README.md must show %s exactly as compiled; copy it again after changing it", file)
                    .contains("```java\n" + source + "\n```");
        }
    }

    /** The JUnit engine the READMEs tell users to add is the one this build compiles the TCK against. */
    @Test
    void readmesNameTheBuildsJUnitVersion() throws IOException {
        String pom = Files.readString(Path.of("..", "pom.xml"), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("<junit.version>([^<]+)</junit.version>").matcher(pom);
        assertThat(m.find()).as("root pom.xml defines junit.version").isTrue();
        String engine = "<artifactId>junit-jupiter-engine</artifactId>\n  <version>" + m.group(1) + "</version>";
        for (Path readme : new Path[] {Path.of("..", "README.md"), Path.of("README.md")}) {
            assertThat(Files.readString(readme, StandardCharsets.UTF_8))
                    .as("%s must add junit-jupiter-engine %s, the root pom's junit.version", readme, m.group(1))
                    .contains(engine);
        }
    }
}
