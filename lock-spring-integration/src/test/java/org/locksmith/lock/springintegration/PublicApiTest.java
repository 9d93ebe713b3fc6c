package org.locksmith.lock.springintegration;

import org.junit.jupiter.api.Test;
import org.locksmith.lock.testsupport.PublicApi;

/**
 * The public API of the Spring Integration adapter matches {@code api/public-api.txt}: a change to it is made on
 * purpose (rewrite the file with {@code -Dlocksmith.api.update=true}) and shows in review, never by accident.
 */
class PublicApiTest {

    @Test
    void publicApiMatchesTheRecordedOne() {
        PublicApi.checkModuleOf(LocksmithLockRegistry.class, "org.locksmith.lock.springintegration");
    }
}
