package com.example.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
}
