package org.locksmith.lock.springboot;

import org.junit.jupiter.api.Test;
import org.locksmith.lock.testsupport.PublicApi;

/**
 * The public API of the starter matches {@code api/public-api.txt}: a change to it is made on purpose (rewrite the
 * file with {@code -Dlocksmith.api.update=true}) and shows in review, never by accident.
 */
class PublicApiTest {

    @Test
    void publicApiMatchesTheRecordedOne() {
        PublicApi.checkModuleOf(LocksmithProperties.class, "org.locksmith.lock.springboot");
    }
}
