package org.locksmith.lock.bench.contenders;

import org.locksmith.lock.bench.Contender;
import org.locksmith.lock.bench.StoreKind;

/** A lock library compared against Locksmith: its name and store. */
abstract class Peer implements Contender {
    private final String name;
    private final StoreKind store;

    Peer(String name, StoreKind store) {
        this.name = name;
        this.store = store;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final StoreKind store() {
        return store;
    }

    @Override
    public final boolean ours() {
        return false;
    }
}
