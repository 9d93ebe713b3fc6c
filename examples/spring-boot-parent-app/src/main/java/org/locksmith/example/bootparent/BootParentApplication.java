package org.locksmith.example.bootparent;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The smallest application on Locksmith as users build one: {@code spring-boot-starter-parent} as its Maven parent,
 * {@code locksmith-bom} imported, the starter and the backends, and {@code locksmith.url} in its configuration. The
 * starter makes the {@link org.locksmith.lock.LockClient} bean; this class adds nothing.
 */
@SpringBootApplication
public class BootParentApplication {

    /** Created by Spring. */
    public BootParentApplication() {}

    /**
     * Starts the application.
     *
     * @param args Spring Boot's arguments, such as {@code --locksmith.url=redis://127.0.0.1:6379}
     */
    public static void main(String[] args) {
        SpringApplication.run(BootParentApplication.class, args);
    }
}
