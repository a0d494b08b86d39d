"""Who owns a monitor among replicas, computed as src/cluster/membership.cc computes it
(rendezvous hashing: the member with the highest weight owns, ties to the smaller id), so
tests and benches can check each replica's /healthz `owned` against it."""
M64 = (1 << 64) - 1


def fnv1a(text):
    h = 0xCBF29CE484222325
    for c in text.encode():
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def mix(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def owner_of(name, members):
    return max(sorted(members), key=lambda m: mix(fnv1a(name) ^ mix(fnv1a(m))))


def owners(names, members):
    """name -> owner for many names, each member's hash computed once."""
    weights = {m: mix(fnv1a(m)) for m in sorted(members)}
    out = {}
    for n in names:
        h = fnv1a(n)
        out[n] = max(weights, key=lambda m: mix(h ^ weights[m]))
    return out


def holders_of(name, members):
    """(owner, standby) of a job: the two members of highest weight (cluster::holders_of)."""
    ranked = sorted(sorted(members), key=lambda m: mix(fnv1a(name) ^ mix(fnv1a(m))), reverse=True)
    return ranked[0], ranked[1] if len(ranked) > 1 else None
