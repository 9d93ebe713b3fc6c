package org.locksmith.lock.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * S1 under JMH: one thread acquires and releases one key, sampled for its latency distribution. Each contender runs
 * in its own forked JVM (in the full run), against the stores the parent run found ({@link
 * Stores#fromSystemProperties()}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class UncontendedBenchmark {

    /** The contender's {@link Contender#name()}; BenchMain sets the list. */
    @Param({"locksmith-redis"})
    public String contender;

    private Contender.Client client;
    private Contender.Handle handle;

    @Setup(Level.Trial)
    public void open() throws Exception {
        client = Contenders.byName(contender).open(Stores.fromSystemProperties(), null);
        handle = client.handle("s1");
    }

    @Benchmark
    public void acquireRelease() throws Exception {
        handle.lock();
        handle.unlock();
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        client.close();
    }
}
