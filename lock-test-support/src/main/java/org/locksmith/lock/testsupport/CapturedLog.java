package org.locksmith.lock.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The messages a logger and its children log while this is open, as {@code System.Logger} delivers them through
 * {@code java.util.logging} (its default backend). For modular tests, which cannot read {@code java.logging}
 * themselves.
 */
public final class CapturedLog implements AutoCloseable {
    private final Logger logger;
    private final List<String> messages = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            messages.add(record.getLevel() + " " + record.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    private CapturedLog(String name) {
        this.logger = Logger.getLogger(name);
        logger.addHandler(handler);
    }

    /**
     * Starts capturing what {@code name} (such as {@code org.locksmith.lock}) and the loggers below it log.
     *
     * @param name the logger's name
     * @return the capture, to be closed by the caller
     */
    public static CapturedLog of(String name) {
        return new CapturedLog(name);
    }

    /**
     * The captured messages so far, oldest first, each as its level, a space and its text.
     *
     * @return a snapshot
     */
    public List<String> messages() {
        return List.copyOf(messages);
    }

    /** Stops capturing. */
    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
