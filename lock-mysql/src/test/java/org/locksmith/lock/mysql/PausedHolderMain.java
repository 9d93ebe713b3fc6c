package org.locksmith.lock.mysql;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.LockLease;
import org.locksmith.lock.LockTimeoutException;
import org.locksmith.lock.Locks;

/**
 * A holder process for {@link MySqlPausedHolderTest}: takes {@code n} keys on a client whose pool has {@code n}
 * lock connections, says HELD, waits for a line on stdin (the test pauses and resumes it meanwhile), then takes
 * {@code n} other keys without releasing the first ones and prints how many it got.
 */
public final class PausedHolderMain {
    private PausedHolderMain() {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int n = Integer.parseInt(args[1]);
        try (LockClient client = Locks.open(url)) {
            List<LockLease> held = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                held.add(client.lock("paused:" + i).acquire(Duration.ofSeconds(10)));
            }
            System.out.println("HELD");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            int got = 0;
            List<LockLease> fresh = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                try {
                    fresh.add(client.lock("paused:new:" + i).acquire(Duration.ofSeconds(5)));
                    got++;
                } catch (LockTimeoutException e) {
                    System.out.println("TIMEOUT " + e.getMessage());
                }
            }
            System.out.println(
                    "VALID " + held.stream().filter(LockLease::isValid).count());
            System.out.println("NEW " + got);
            System.out.flush();
            fresh.forEach(LockLease::release);
        }
    }
}
