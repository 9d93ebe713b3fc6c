package org.locksmith.lock.testservers;

import org.testcontainers.DockerClientFactory;

/** Whether Testcontainers can start containers here; where no engine exists it says no in well under a second. */
final class Docker {
    private Docker() {}

    /** True if a Docker engine answers; false if none does or Testcontainers cannot load. */
    static boolean answers() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }
}
