package org.locksmith.lock.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay in front of a server that can stop relaying while it keeps every connection open: to a client, the
 * server looks stopped (SIGSTOP, a stalled quorum, a network that drops packets silently). Bytes read while stalled
 * are held and relayed on {@link #resume()}.
 */
public final class StallingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean stalled;
    /** Connections stalled one by one, by the port their client connected from. */
    private final java.util.Set<Integer> stalledConnections = new java.util.HashSet<>();

    /** Listens on a free loopback port and relays each connection to {@code targetPort} on the loopback address. */
    public StallingProxy(int targetPort) throws IOException {
        this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon("stalling-proxy-accept", this::accept).start();
    }

    /** The port clients connect to instead of the server's. */
    public int port() {
        return listener.getLocalPort();
    }

    /** Stops relaying in both directions; connections stay open. */
    public void stall() {
        synchronized (gate) {
            stalled = true;
        }
    }

    /**
     * Stops relaying on one connection only, in both directions; the others go on. It is named by the port its
     * client connected from: the local port of the client's socket (a JDBC connection's, for example).
     */
    public void stallConnection(int clientPort) {
        synchronized (gate) {
            stalledConnections.add(clientPort);
        }
    }

    /** Relays again on every connection, first what was held while stalled. */
    public void resume() {
        synchronized (gate) {
            stalled = false;
            stalledConnections.clear();
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                server.connect(target, 2_000);
                sockets.add(client);
                sockets.add(server);
                int port = client.getPort();
                daemon("stalling-proxy-up", () -> relay(client, server, port)).start();
                daemon("stalling-proxy-down", () -> relay(server, client, port)).start();
            } catch (IOException e) {
                // closed, or the server is down: the client sees its connection fail
            }
        }
    }

    private void relay(Socket from, Socket to, int clientPort) {
        byte[] buffer = new byte[8192];
        try (InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                synchronized (gate) {
                    while (stalled || stalledConnections.contains(clientPort)) {
                        gate.wait();
                    }
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // a side closed
        } finally {
            close(from);
            close(to);
        }
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    private static Thread daemon(String name, Runnable task) {
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public void close() throws IOException {
        resume();
        listener.close();
        sockets.forEach(StallingProxy::close);
    }
}
