package org.locksmith.lock.tck.reference;

/** The whole TCK against the correct in-memory reference backend: every contract it declares must pass. */
class MemoryReferenceTckTest extends MemoryTck {
    @Override
    String name() {
        return "reference-memory";
    }
}
