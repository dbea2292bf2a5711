//! Forwarder-wide counters, the numbers behind `status/general` and the benchmarks.

/// Packets in and out by type: kept per face and for the whole forwarder, the
/// counts NFD reports in both `faces/list` and `status/general`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PacketCounters {
    /// Interests received (decoded), before any check drops them.
    pub in_interests: u64,
    /// Data received (decoded), solicited or not.
    pub in_data: u64,
    /// Nacks received (decoded).
    pub in_nacks: u64,
    /// Interests handed to a face to send, retransmissions included.
    pub out_interests: u64,
    /// Data handed to a face to send, from the CS or an upstream.
    pub out_data: u64,
    /// Nacks handed to a face to send.
    pub out_nacks: u64,
}

/// Packet and event counts since start. Plain integers: one engine is owned by one
/// thread, so counting costs an add, not an atomic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwarderCounters {
    /// Packets in and out over every face (NFD's `status/general` totals).
    pub packets: PacketCounters,
    /// PIT entries answered by Data (NFD's nSatisfiedInterests).
    pub satisfied_interests: u64,
    /// PIT entries whose lifetime ended with no Data (NFD's nUnsatisfiedInterests).
    pub unsatisfied_interests: u64,
    /// Packets that failed to decode (counted and dropped).
    pub malformed: u64,
    /// Data that matched no PIT entry.
    pub unsolicited_data: u64,
    /// `/localhost` packets from non-local faces, or `/localhop` crossing two non-local faces.
    pub scope_violations: u64,
    /// Interests refused as loops (duplicate Nonce).
    pub loops: u64,
    /// Interests answered with Nack NoRoute.
    pub no_route: u64,
    /// Interests dropped because HopLimit reached zero.
    pub hop_limit_drops: u64,
    /// Interests dropped because the PIT was full (of entries, or of in-records
    /// beyond the entries' inline ones).
    pub pit_full: u64,
    /// Interests from a new face dropped because their PIT entry already held
    /// [`trajan_tables::MAX_IN_RECORDS`] in-records: one name with a crowd, or
    /// an attacker, asking for it.
    pub in_records_full: u64,
    /// Downstreams (face and PIT token) a Data was not sent to because it
    /// had more than [`MAX_DOWNSTREAMS`](crate::forwarder::MAX_DOWNSTREAMS):
    /// their entries are satisfied all the same, and the consumers retransmit.
    pub downstreams_cut: u64,
    /// Interests answered from the content store.
    pub cs_hits: u64,
    /// Nacks or Data arriving for an unknown face or PIT entry.
    pub dropped_nacks: u64,
}
