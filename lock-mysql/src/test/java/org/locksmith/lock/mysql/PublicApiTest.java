package org.locksmith.lock.mysql;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.locksmith.lock.testsupport.PublicApi;

/**
 * The public API of the MySQL backend matches {@code api/public-api.txt}: a change to it is made on purpose (rewrite the file
 * with {@code -Dlocksmith.api.update=true}) and shows in review, never by accident.
 */
class PublicApiTest {

    @Test
    void publicApiMatchesTheRecordedOne() throws Exception {
        Path classes = Path.of(MySqlLocks.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        PublicApi.check(
                classes,
                MySqlLocks.class.getClassLoader(),
                Path.of("api", "public-api.txt"),
                "org.locksmith.lock.mysql");
    }
}
