package org.locksmith.lock.redis.internal;

import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.commons.pool2.impl.DefaultPooledObject;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionFactory;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.exceptions.JedisException;

/**
 * The connection pool of the clients this backend opens from a URL: at most {@code maxTotal} connections to one
 * server, borrowed in arrival order, a borrower waiting at most {@code maxWait}, without a monitor anywhere on the
 * way.
 *
 * <p>Why not the commons-pool2 pool Jedis builds: since commons-pool2 2.13 its {@code returnObject} holds the pooled
 * object's monitor while it takes the idle deque's lock, so on Java 21 a virtual thread that finds that lock taken
 * parks while holding a monitor and pins its carrier (25 {@code jdk.VirtualThreadPinned} events in the 10,000
 * virtual-thread benchmark, every one there; Java 24+ no longer pins on monitors). Here a fair {@link Semaphore}
 * counts the connections lent out and a lock-free deque keeps the idle ones, so a waiting borrower parks like any
 * virtual thread and frees its carrier.
 *
 * <p>It is a {@link ConnectionPool} because a Jedis {@link Connection} gives itself back to one on {@code close()};
 * none of the inherited pool's own borrow and return machinery is used (the inherited object only carries the
 * configuration, for {@link #getMaxTotal()}, and its closed flag). No idle connection is tested or evicted, as with
 * the configuration the backend gave the pool before: a connection the server closed fails its next command, is
 * marked broken and is dropped when given back.
 */
final class FairConnectionPool extends ConnectionPool {
    private final ConnectionFactory factory;
    private final Semaphore lent;
    private final long maxWaitNanos;
    private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
    private volatile boolean closed;

    /**
     * @param poolConfig read for {@code maxTotal} (a positive bound) and {@code maxWait} only
     */
    FairConnectionPool(HostAndPort server, JedisClientConfig config, GenericObjectPoolConfig<Connection> poolConfig) {
        this(new ConnectionFactory(server, config), poolConfig);
    }

    private FairConnectionPool(ConnectionFactory factory, GenericObjectPoolConfig<Connection> poolConfig) {
        super(factory, poolConfig);
        if (poolConfig.getMaxTotal() <= 0) {
            throw new IllegalArgumentException("a pool needs a positive maxTotal, not " + poolConfig.getMaxTotal());
        }
        this.factory = factory;
        this.lent = new Semaphore(poolConfig.getMaxTotal(), true);
        Duration maxWait = poolConfig.getMaxWaitDuration();
        this.maxWaitNanos = maxWait.isNegative() ? Long.MAX_VALUE : maxWait.toNanos();
    }

    /**
     * An idle connection, or a new one while fewer than {@code maxTotal} are lent out; waits in arrival order at
     * most {@code maxWait} for one to be given back.
     *
     * @throws JedisException "Could not get a resource from the pool", as Jedis's own pools fail, caused by a
     *     {@link NoSuchElementException} if none was given back within {@code maxWait}, by the connection's failure
     *     if a new one could not be made, or by the {@link InterruptedException} if the wait was interrupted (the
     *     interrupt stays set)
     * @throws IllegalStateException if the pool is closed (as Jedis's own pools fail then)
     */
    @Override
    public Connection getResource() {
        requireOpen();
        try {
            if (!lent.tryAcquire(maxWaitNanos, TimeUnit.NANOSECONDS)) {
                throw new JedisException(
                        "Could not get a resource from the pool",
                        new NoSuchElementException(
                                "Timeout waiting for idle object, borrowMaxWait=" + Duration.ofNanos(maxWaitNanos)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new JedisException("Could not get a resource from the pool", e);
        }
        try {
            requireOpen();
            Connection connection = idle.pollFirst();
            if (connection == null) {
                connection = connect();
            }
            connection.setHandlingPool(this);
            return connection;
        } catch (RuntimeException e) {
            lent.release();
            throw e;
        }
    }

    private Connection connect() {
        try {
            return factory.makeObject().getObject();
        } catch (Exception e) {
            throw new JedisException("Could not get a resource from the pool", e);
        }
    }

    /** Keeps a healthy connection for the next borrower (the most recently used first); drops it once closed. */
    @Override
    public void returnResource(Connection connection) {
        if (connection == null) {
            return;
        }
        if (closed || connection.isBroken()) {
            destroy(connection);
        } else {
            idle.offerFirst(connection);
            if (closed && idle.remove(connection)) {
                destroy(connection); // closed meanwhile: close() may already have drained the deque
            }
        }
        lent.release();
    }

    /** Closes a connection that failed; the next borrower makes a new one. */
    @Override
    public void returnBrokenResource(Connection connection) {
        if (connection == null) {
            return;
        }
        destroy(connection);
        lent.release();
    }

    /** Closes the idle connections (the backend calls it when the server closed one of them). */
    @Override
    public void clear() {
        for (Connection c = idle.pollFirst(); c != null; c = idle.pollFirst()) {
            destroy(c);
        }
    }

    /** Closes the idle connections now and each lent one when it is given back; borrowing fails from now on. */
    @Override
    public void close() {
        closed = true;
        clear();
        super.close();
    }

    @Override
    public int getNumActive() {
        return closed ? -1 : getMaxTotal() - lent.availablePermits();
    }

    @Override
    public int getNumIdle() {
        return closed ? -1 : idle.size();
    }

    @Override
    public int getNumWaiters() {
        return closed ? -1 : lent.getQueueLength();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("Pool not open: this Redis lock client's connections were closed");
        }
    }

    private void destroy(Connection connection) {
        try {
            factory.destroyObject(new DefaultPooledObject<>(connection));
        } catch (Exception e) {
            // closing a connection that is already gone: nothing more to free
        }
    }
}
