package org.locksmith.example.accounts;

import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.locksmith.lock.LockClient;
import org.locksmith.lock.shedlock.LocksmithLockProvider;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A small accounts service on Locksmith. The starter ({@code lock-spring-boot-starter}) makes the {@link LockClient}
 * bean from {@code locksmith.url}; this class only adds ShedLock on top of it:
 *
 * <ul>
 *   <li>{@link AccountController}: deposits taken under a lock per account and written with the lease's fencing token
 *       into a {@link FencedLedger}, which refuses a write with an older token;
 *   <li>{@link ReportJob}: a {@code @Scheduled} job that runs on one instance at a time through ShedLock's {@code
 *       @SchedulerLock} and {@link LocksmithLockProvider};
 *   <li>the starter's {@code locksmith} health indicator and lock metrics, served by Spring Boot's actuator.
 * </ul>
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
public class AccountsApplication {

    /** Created by Spring. */
    public AccountsApplication() {}

    /**
     * ShedLock's lock provider on the starter's client: the lock of a job named {@code n} is the key {@code
     * shedlock:n}. Closed with the context (it releases the locks it holds), before the client it uses.
     *
     * @param locks the starter's client
     * @return the provider
     */
    @Bean
    public LocksmithLockProvider lockProvider(LockClient locks) {
        return new LocksmithLockProvider(locks);
    }

    /**
     * Starts the service.
     *
     * @param args Spring Boot's command-line arguments ({@code --server.port=8081}, {@code --locksmith.url=...})
     */
    public static void main(String[] args) {
        SpringApplication.run(AccountsApplication.class, args);
    }
}
