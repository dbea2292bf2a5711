/*
 * Trajan's C shim over DPDK: DPDK's fast-path functions (rx/tx burst, mbuf
 * allocation and accessors) are `static inline` in its headers, so Rust cannot link
 * to them; each is wrapped here in a real function. Port set-up is here too, so the
 * large configuration structures (rte_eth_conf, rte_eth_dev_info) never need a Rust
 * mirror that could drift from the headers of the installed DPDK.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>
#include <rte_ring.h>

int trajan_errno(void) { return rte_errno; }

uint16_t trajan_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n) {
    return rte_eth_rx_burst(port, queue, pkts, n);
}

uint16_t trajan_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n) {
    return rte_eth_tx_burst(port, queue, pkts, n);
}

struct rte_mbuf *trajan_mbuf_alloc(struct rte_mempool *mp) { return rte_pktmbuf_alloc(mp); }

void trajan_mbuf_free(struct rte_mbuf *m) { rte_pktmbuf_free(m); }

/*
 * Where the probed ports' buffers may live, for the pool's layout: 0 when every
 * port is a virtual device (no device DMAs to physical addresses, so buffers may
 * cross page boundaries); 1 when a port sits on a physical bus (PCI) and buffers
 * must stay within a page; 2 when, besides, a port is net_af_xdp, which then
 * cannot reach every buffer (see trajan_pool_is_packed).
 */
int trajan_ports_layout(void) {
    int physical = 0, af_xdp = 0;
    uint16_t p;

    RTE_ETH_FOREACH_DEV(p) {
        struct rte_eth_dev_info info;
        if (rte_eth_dev_info_get(p, &info) != 0)
            continue;
        if (info.driver_name != NULL && strcmp(info.driver_name, "net_af_xdp") == 0)
            af_xdp = 1;
        if (info.device != NULL && strcmp(rte_bus_name(rte_dev_bus(info.device)), "vdev") != 0)
            physical = 1;
    }
    return physical ? 1 + af_xdp : 0;
}

/*
 * A pool of `n` packet buffers of `data_room` bytes. `packed` = 0 is DPDK's
 * default pool, whose buffers never cross a page boundary (what a NIC that DMAs
 * to physical addresses needs), leaving a gap at the end of each page: 1.7 KB of
 * every 4 KB page without hugepages. `packed` = 1 lays the buffers back to back in
 * one block. NULL with rte_errno set on failure.
 */
struct rte_mempool *trajan_pool_create(const char *name, unsigned n, unsigned cache, uint16_t data_room, int packed) {
    struct rte_pktmbuf_pool_private priv;
    struct rte_mempool *mp;
    int rc;

    if (!packed)
        return rte_pktmbuf_pool_create(name, n, cache, 0, data_room, SOCKET_ID_ANY);
    memset(&priv, 0, sizeof(priv));
    priv.mbuf_data_room_size = data_room;
    mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) + data_room, cache, sizeof(priv), SOCKET_ID_ANY,
                                  RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (mp == NULL)
        return NULL;
    rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
    if (rc == 0) {
        rte_pktmbuf_pool_init(mp, &priv);
        rc = rte_mempool_populate_default(mp);
    }
    if (rc < 0) {
        rte_mempool_free(mp);
        rte_errno = -rc;
        return NULL;
    }
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
    return mp;
}

/*
 * 1 when the pool's buffers lie back to back in one block, as DPDK 22.11's
 * net_af_xdp assumes: it registers the pool as its UMEM from the first block's
 * address for populated_size x object size bytes, so a buffer beyond that is an
 * invalid descriptor the kernel drops without a trace (on RX it never fills, on
 * TX the frame is lost and its mbuf never completes).
 */
int trajan_pool_is_packed(const struct rte_mempool *mp) {
    const struct rte_mempool_memhdr *first = STAILQ_FIRST(&mp->mem_list);
    size_t object = rte_mempool_calc_obj_size(mp->elt_size, mp->flags, NULL);

    return mp->nb_mem_chunks == 1 && first != NULL && first->len <= (size_t)mp->populated_size * object;
}

/* Starts loading both cache lines of an mbuf's header, which rte_pktmbuf_free
 * reads (refcnt in the first, next/nb_segs in the second). A hint. */
void trajan_mbuf_prefetch(struct rte_mbuf *m) {
    rte_prefetch0(m);
    rte_prefetch0(&m->cacheline1);
}

/* The bytes of a one-segment mbuf; NULL for a chained one (Trajan's mempools hold
 * a whole frame per mbuf, so chains only come from jumbo frames it does not take). */
uint8_t *trajan_mbuf_data(struct rte_mbuf *m, uint16_t *len) {
    if (m->nb_segs != 1) {
        *len = 0;
        return NULL;
    }
    *len = rte_pktmbuf_data_len(m);
    return rte_pktmbuf_mtod(m, uint8_t *);
}

/* Room for `len` more bytes at the end of the mbuf's data, or NULL. */
uint8_t *trajan_mbuf_append(struct rte_mbuf *m, uint16_t len) {
    return (uint8_t *)rte_pktmbuf_append(m, len);
}

/*
 * Configures and starts a port with `queues` RX and TX queues of `desc` descriptors
 * each, receiving into `mp`. With more than one queue and hardware that supports
 * it, RSS spreads flows over the queues by IP addresses and UDP ports. Fills `mac`
 * with the port's address. Returns 0 or a negative errno; `why` names the failing step.
 */
int trajan_port_start(uint16_t port, uint16_t queues, uint16_t desc, struct rte_mempool *mp, uint8_t mac[6],
                      const char **why) {
    struct rte_eth_dev_info info;
    struct rte_eth_conf conf;
    int rc;
    uint16_t q, nb_rxd = desc, nb_txd = desc;
    struct rte_ether_addr addr;

    memset(&conf, 0, sizeof(conf));
    *why = "rte_eth_dev_info_get";
    rc = rte_eth_dev_info_get(port, &info);
    if (rc != 0)
        return rc;
    if (queues > info.max_rx_queues || queues > info.max_tx_queues) {
        *why = "more queues than the port has";
        return -EINVAL;
    }
    if (queues > 1 && info.flow_type_rss_offloads != 0) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
    }
    *why = "rte_eth_dev_configure";
    rc = rte_eth_dev_configure(port, queues, queues, &conf);
    if (rc != 0)
        return rc;
    *why = "rte_eth_dev_adjust_nb_rx_tx_desc";
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
    if (rc != 0)
        return rc;
    for (q = 0; q < queues; q++) {
        *why = "rte_eth_rx_queue_setup";
        rc = rte_eth_rx_queue_setup(port, q, nb_rxd, rte_eth_dev_socket_id(port), NULL, mp);
        if (rc != 0)
            return rc;
        *why = "rte_eth_tx_queue_setup";
        rc = rte_eth_tx_queue_setup(port, q, nb_txd, rte_eth_dev_socket_id(port), NULL);
        if (rc != 0)
            return rc;
    }
    *why = "rte_eth_dev_start";
    rc = rte_eth_dev_start(port);
    if (rc != 0)
        return rc;
    /* Virtual devices may not support promiscuous mode; frames to our MAC still arrive. */
    rte_eth_promiscuous_enable(port);
    *why = "rte_eth_macaddr_get";
    rc = rte_eth_macaddr_get(port, &addr);
    if (rc != 0)
        return rc;
    memcpy(mac, addr.addr_bytes, 6);
    *why = NULL;
    return 0;
}

/* 1 if the port's link is up, 0 if down, a negative errno on error. */
int trajan_link_up(uint16_t port) {
    struct rte_eth_link link;
    int rc;

    memset(&link, 0, sizeof(link));
    rc = rte_eth_link_get_nowait(port, &link);
    if (rc != 0)
        return rc;
    return link.link_status == RTE_ETH_LINK_UP;
}

/* Port counters, in Trajan's order: in, out, missed, in errors, out errors, no mbuf. */
int trajan_port_stats(uint16_t port, uint64_t out[6]) {
    struct rte_eth_stats s;
    int rc = rte_eth_stats_get(port, &s);
    if (rc != 0)
        return rc;
    out[0] = s.ipackets;
    out[1] = s.opackets;
    out[2] = s.imissed;
    out[3] = s.ierrors;
    out[4] = s.oerrors;
    out[5] = s.rx_nombuf;
    return 0;
}

/*
 * The most RX/TX queue pairs Trajan may use on port `port` by itself, or a negative
 * errno: the device's limit, except for memif, whose queues are shared-memory
 * rings that its peer must open too (a memif port reports many whatever its peer
 * does, and a queue the peer did not open carries nothing).
 */
int trajan_port_max_queues(uint16_t port) {
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(port, &info);
    if (rc != 0)
        return rc;
    if (info.driver_name != NULL && strcmp(info.driver_name, "net_memif") == 0)
        return 1;
    return info.max_rx_queues < info.max_tx_queues ? info.max_rx_queues : info.max_tx_queues;
}

/*
 * Two ethdev ports joined back to back by `queues` pairs of rings (what one sends
 * on its TX queue i, the other receives on its RX queue i): a virtual cable inside
 * one process, for tests and the one-process benchmark. net_ring has no RSS: the
 * sender's queue picks the receiver's. Returns 0 and the two port ids, or a
 * negative errno.
 */
#define TRAJAN_RING_QUEUES 16
int trajan_ring_pair(const char *name, unsigned size, uint16_t queues, uint16_t ports[2]) {
    char a_name[64], b_name[64], ring_name[64];
    struct rte_ring *ab[TRAJAN_RING_QUEUES], *ba[TRAJAN_RING_QUEUES];
    int a, b;
    uint16_t q;

    if (queues == 0 || queues > TRAJAN_RING_QUEUES)
        return -EINVAL;
    for (q = 0; q < queues; q++) {
        snprintf(ring_name, sizeof(ring_name), "%s_ab%u", name, q);
        ab[q] = rte_ring_create(ring_name, size, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
        snprintf(ring_name, sizeof(ring_name), "%s_ba%u", name, q);
        ba[q] = rte_ring_create(ring_name, size, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (ab[q] == NULL || ba[q] == NULL)
            return -rte_errno;
    }
    snprintf(a_name, sizeof(a_name), "%s_a", name);
    snprintf(b_name, sizeof(b_name), "%s_b", name);
    a = rte_eth_from_rings(a_name, ba, queues, ab, queues, rte_socket_id());
    b = rte_eth_from_rings(b_name, ab, queues, ba, queues, rte_socket_id());
    if (a < 0 || b < 0)
        return -rte_errno;
    ports[0] = (uint16_t)a;
    ports[1] = (uint16_t)b;
    return 0;
}
