package org.locksmith.lock;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.testsupport.PublicApi;

/**
 * The public API of the API and the SPI matches {@code api/public-api.txt}: a change to it is made on purpose (rewrite the file
 * with {@code -Dlocksmith.api.update=true}) and shows in review, never by accident.
 */
class PublicApiTest {

    @Test
    void publicApiMatchesTheRecordedOne() throws Exception {
        Path classes = Path.of(
                Locks.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        PublicApi.check(
                classes,
                Locks.class.getClassLoader(),
                Path.of("api", "public-api.txt"),
                "org.locksmith.lock",
                "org.locksmith.lock.spi");
    }
}
