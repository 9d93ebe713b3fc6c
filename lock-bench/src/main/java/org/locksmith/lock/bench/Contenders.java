package org.locksmith.lock.bench;

import java.util.List;
import java.util.stream.Collectors;
import org.locksmith.lock.bench.contenders.CuratorContender;
import org.locksmith.lock.bench.contenders.LocksmithContender;
import org.locksmith.lock.bench.contenders.RedissonContender;
import org.locksmith.lock.bench.contenders.ShedLockContender;
import org.locksmith.lock.bench.contenders.SpringJdbcContender;
import org.locksmith.lock.bench.contenders.SpringRedisContender;

/** Every contender of the comparison, ours first within each store. */
public final class Contenders {
    private static final List<Contender> ALL = List.of(
            LocksmithContender.redis(),
            RedissonContender.rlock(),
            RedissonContender.fairLock(),
            new SpringRedisContender(),
            LocksmithContender.zookeeper(),
            new CuratorContender(),
            LocksmithContender.mysql("row"),
            LocksmithContender.mysql("lease"),
            LocksmithContender.mysql("named"),
            SpringJdbcContender.mysql(),
            LocksmithContender.postgres(),
            SpringJdbcContender.postgres(),
            new ShedLockContender());

    private Contenders() {}

    public static List<Contender> all() {
        return ALL;
    }

    /** The contender called {@code name}; the message lists the known names. */
    public static Contender byName(String name) {
        return ALL.stream()
                .filter(c -> c.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("No contender '" + name + "'; known: "
                        + ALL.stream().map(Contender::name).collect(Collectors.joining(", "))));
    }
}
