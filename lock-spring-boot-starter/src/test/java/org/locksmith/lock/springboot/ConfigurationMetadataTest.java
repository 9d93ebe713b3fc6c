package org.locksmith.lock.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The configuration processor wrote the metadata IDEs complete {@code locksmith.*} from, with descriptions. */
class ConfigurationMetadataTest {

    @Test
    void everyPropertyIsDescribedForIdes() throws IOException {
        String json;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in)
                    .as("META-INF/spring-configuration-metadata.json in the jar")
                    .isNotNull();
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(json)
                .contains(
                        "\"locksmith.url\"",
                        "\"locksmith.use-application-connections\"",
                        "\"locksmith.health.key\"",
                        "\"locksmith.health.timeout\"",
                        "\"locksmith.health.lost-window\"",
                        "\"locksmith.metrics.enabled\"")
                .contains("The lock URL: scheme");
    }
}
