package org.locksmith.lock.bench;

/** The scenarios of the comparison, numbered as in the report ({@code docs/benchmarks.md}). */
public enum Scenario {
    S1("uncontended", "one thread, acquire + release of one key"),
    S2("parallel", "8 threads, one client, a key each"),
    S3("contended", "8 clients (own connections each) on one key, no work inside"),
    S4("handoff", "two clients ping-pong one key: holder's release call to waiter's grant"),
    S5("re-entry", "store commands per re-entrant acquire and release"),
    S6("many leases", "one client holding 10,000 leases for three lease periods");

    private final String title;
    private final String what;

    Scenario(String title, String what) {
        this.title = title;
        this.what = what;
    }

    public String title() {
        return title;
    }

    public String what() {
        return what;
    }
}
