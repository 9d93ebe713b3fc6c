package org.locksmith.lock.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP proxy in front of a Redis that loses one message on demand, to reproduce what a real network does to a
 * command: the request reached the server and ran, but its reply never came back (the connection broke, or it went
 * silent). Each fault is armed once and hits the next message that passes in its direction, on whatever connection.
 */
final class FaultProxy implements AutoCloseable {

    /** What to do to the next message. */
    enum Fault {
        /** Forward nothing more on the connection that carries the next reply, and close it: "connection reset". */
        CLOSE_ON_REPLY,
        /** Swallow the next reply and keep its connection open but silent: the client's read times out. */
        SILENCE_REPLY,
        /** Swallow the next request (the server never sees it) and keep its connection open but silent. */
        SILENCE_REQUEST
    }

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final AtomicReference<Fault> armed = new AtomicReference<>();
    private final java.util.concurrent.atomic.AtomicInteger shots = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean arraysOnly;
    private volatile CountDownLatch hit = new CountDownLatch(1);
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    FaultProxy(String host, int port) throws IOException {
        this.target = new InetSocketAddress(host, port);
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "fault-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Arms {@code fault} for the next message in its direction; {@link #awaitHit()} returns once it struck. */
    void arm(Fault fault) {
        arraysOnly = false;
        arm(fault, 1);
    }

    /**
     * Arms {@code fault} for the next {@code times} array replies ({@code *...}, such as a lock script's): a
     * reconnection's handshake replies ({@code +OK}, maps) pass.
     */
    void armArrayReplies(Fault fault, int times) {
        arraysOnly = true;
        arm(fault, times);
    }

    /** Arms {@code fault} for the next {@code times} messages in its direction. */
    void arm(Fault fault, int times) {
        hit = new CountDownLatch(times);
        shots.set(times);
        armed.set(fault);
    }

    /** Waits (bounded by the test's timeout) until the armed fault struck. */
    void awaitHit() throws InterruptedException {
        hit.await();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                server.connect(target, 2_000);
                sockets.add(client);
                sockets.add(server);
                Link link = new Link(client, server);
                start(() -> link.pump(client, server, false), "fault-proxy-up");
                start(() -> link.pump(server, client, true), "fault-proxy-down");
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void start(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    /** One client connection and its server connection. */
    private final class Link {
        private final Socket client;
        private final Socket server;
        private volatile boolean silent;

        Link(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void pump(Socket from, Socket to, boolean replies) {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream()) {
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (!silent && strike(replies, buffer[0])) {
                        continue;
                    }
                    if (!silent) {
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException e) {
                // the other side closed
            } finally {
                if (!silent) {
                    closeQuietly(client);
                    closeQuietly(server);
                }
            }
        }

        /** True if the armed fault took this message. */
        private boolean strike(boolean reply, byte first) {
            Fault f = armed.get();
            if (f == null || (f == Fault.SILENCE_REQUEST) == reply || (arraysOnly && first != '*')) {
                return false;
            }
            int left = shots.getAndDecrement();
            if (left <= 0) {
                return false;
            }
            if (left == 1) {
                armed.compareAndSet(f, null);
            }
            if (f == Fault.CLOSE_ON_REPLY) {
                closeQuietly(client);
                closeQuietly(server);
            } else {
                silent = true;
            }
            hit.countDown();
            return true;
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        sockets.forEach(FaultProxy::closeQuietly);
    }
}
