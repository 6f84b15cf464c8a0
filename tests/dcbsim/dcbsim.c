// SPDX-License-Identifier: GPL-2.0
/*
 * dcbsim - simulated Ethernet netdevs with an in-memory IEEE DCB state.
 *
 * A test device for the rdma.fabric lab, in the spirit of the kernel's
 * netdevsim: it registers N netdevs named dcbsimN whose dcbnl_rtnl_ops keep
 * IEEE 802.1Qaz ETS, PFC, maxrate, buffer and DCBX mode in memory, and whose
 * APP table lives in the kernel's own table (dcb_ieee_setapp/delapp), so that
 * iproute2 `dcb` round-trips through the real DCB netlink interface.  The
 * ETS/PFC/APP validation follows what real drivers do (mlx5 en_dcbnl.c):
 * invalid configurations are rejected with -EINVAL.  Transmitted packets are
 * counted (per DSCP and per skb priority, see `ethtool -S`) and discarded.
 * An rxe (Soft-RoCE) device can sit on top: `rdma link add rxe0 type rxe
 * netdev dcbsim0`.
 *
 * Module parameters:
 *   num_devs  number of netdevs (1-16, default 1)
 *   num_tc    traffic classes per device, reported as ets_cap/pfc_cap (1-8)
 *   speed     link speed in Mb/s reported to ethtool (and so to rxe)
 *   fail      fault injection, writable at run time through
 *             /sys/module/dcbsim/parameters/fail: a comma-separated list of
 *             ets,pfc,app,dcbx,maxrate,buffer,mtu,pause (or "none"); every
 *             set operation of a listed kind fails with -EIO.
 *
 * Everything here runs under RTNL (dcbnl, ethtool and ndo_change_mtu are all
 * called with the RTNL lock held), which serialises access to the state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/udp.h>
#include <net/dcbnl.h>
#include <net/dsfield.h>

#define DCBSIM_MAX_DEVS		16
#define DCBSIM_MAX_MTU		9216
#define DCBSIM_NUM_DSCP		64
#define DCBSIM_NUM_PRIO		IEEE_8021QAZ_MAX_TCS
#define DCBSIM_ROCE_V2_PORT	4791
#define DCBSIM_BUFFER_TOTAL	(512 * 1024)

static unsigned int num_devs = 1;
module_param(num_devs, uint, 0444);
MODULE_PARM_DESC(num_devs, "Number of dcbsimN netdevs to create (1-16, default 1)");

static unsigned int num_tc = IEEE_8021QAZ_MAX_TCS;
module_param(num_tc, uint, 0444);
MODULE_PARM_DESC(num_tc, "Traffic classes per device, reported as ets_cap and pfc_cap (1-8, default 8)");

static unsigned int speed = SPEED_100000;
module_param(speed, uint, 0444);
MODULE_PARM_DESC(speed, "Link speed in Mb/s reported through ethtool (default 100000)");

enum dcbsim_op {
	DCBSIM_OP_ETS,
	DCBSIM_OP_PFC,
	DCBSIM_OP_APP,
	DCBSIM_OP_DCBX,
	DCBSIM_OP_MAXRATE,
	DCBSIM_OP_BUFFER,
	DCBSIM_OP_MTU,
	DCBSIM_OP_PAUSE,
	DCBSIM_OP_NUM,
};

static const char * const dcbsim_op_names[DCBSIM_OP_NUM] = {
	[DCBSIM_OP_ETS] = "ets",
	[DCBSIM_OP_PFC] = "pfc",
	[DCBSIM_OP_APP] = "app",
	[DCBSIM_OP_DCBX] = "dcbx",
	[DCBSIM_OP_MAXRATE] = "maxrate",
	[DCBSIM_OP_BUFFER] = "buffer",
	[DCBSIM_OP_MTU] = "mtu",
	[DCBSIM_OP_PAUSE] = "pause",
};

static unsigned long dcbsim_fail_mask;

static int dcbsim_fail_set(const char *val, const struct kernel_param *kp)
{
	unsigned long mask = 0;
	char *buf, *cur, *tok;
	int err = 0;
	int i;

	buf = kstrdup(val, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	cur = strim(buf);
	if (!strcmp(cur, "none"))
		cur = NULL;
	while (cur && (tok = strsep(&cur, ",")) != NULL) {
		tok = strim(tok);
		if (!*tok)
			continue;
		for (i = 0; i < DCBSIM_OP_NUM; i++)
			if (!strcmp(tok, dcbsim_op_names[i]))
				break;
		if (i == DCBSIM_OP_NUM) {
			pr_err("fail: unknown operation '%s'\n", tok);
			err = -EINVAL;
			goto out;
		}
		mask |= BIT(i);
	}
	WRITE_ONCE(dcbsim_fail_mask, mask);
out:
	kfree(buf);
	return err;
}

static int dcbsim_fail_get(char *buffer, const struct kernel_param *kp)
{
	unsigned long mask = READ_ONCE(dcbsim_fail_mask);
	int len = 0;
	int i;

	for (i = 0; i < DCBSIM_OP_NUM; i++)
		if (mask & BIT(i))
			len += scnprintf(buffer + len, PAGE_SIZE - len, "%s%s",
					 len ? "," : "", dcbsim_op_names[i]);
	if (!len)
		len = scnprintf(buffer, PAGE_SIZE, "none");
	len += scnprintf(buffer + len, PAGE_SIZE - len, "\n");
	return len;
}

static const struct kernel_param_ops dcbsim_fail_ops = {
	.set = dcbsim_fail_set,
	.get = dcbsim_fail_get,
};
module_param_cb(fail, &dcbsim_fail_ops, NULL, 0644);
MODULE_PARM_DESC(fail,
		 "Fault injection: comma-separated set operations that fail with -EIO (ets,pfc,app,dcbx,maxrate,buffer,mtu,pause; none)");

struct dcbsim_priv {
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	struct ieee_maxrate maxrate;
	struct dcbnl_buffer buffer;
	u8 dcbx;
	bool rx_pause;
	bool tx_pause;
	atomic64_t tx_packets;
	atomic64_t tx_bytes;
	atomic64_t tx_roce_v2;
	atomic64_t tx_other;
	atomic64_t tx_dscp[DCBSIM_NUM_DSCP];
	atomic64_t tx_prio[DCBSIM_NUM_PRIO];
};

static struct net_device *dcbsim_devs[DCBSIM_MAX_DEVS];

static bool dcbsim_should_fail(struct net_device *dev, enum dcbsim_op op)
{
	if (!(READ_ONCE(dcbsim_fail_mask) & BIT(op)))
		return false;
	netdev_warn(dev, "injected failure: %s\n", dcbsim_op_names[op]);
	return true;
}

/* --- dcbnl: IEEE 802.1Qaz ---------------------------------------------- */

static int dcbsim_ieee_getets(struct net_device *dev, struct ieee_ets *ets)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	*ets = priv->ets;
	return 0;
}

/* Same rules as mlx5e_dbcnl_validate_ets(), plus the TSA and range checks
 * a device with num_tc traffic classes needs.
 */
static int dcbsim_validate_ets(struct net_device *dev, const struct ieee_ets *ets)
{
	bool have_ets_tc = false;
	int bw_sum = 0;
	int i;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (ets->prio_tc[i] >= num_tc) {
			netdev_err(dev, "invalid ETS: priority %d mapped to TC %u, device has %u TCs\n",
				   i, ets->prio_tc[i], num_tc);
			return -EINVAL;
		}
	}

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		switch (ets->tc_tsa[i]) {
		case IEEE_8021QAZ_TSA_STRICT:
			break;
		case IEEE_8021QAZ_TSA_ETS:
			if (i >= num_tc) {
				netdev_err(dev, "invalid ETS: TC %d does not exist\n", i);
				return -EINVAL;
			}
			have_ets_tc = true;
			bw_sum += ets->tc_tx_bw[i];
			break;
		default:
			netdev_err(dev, "invalid ETS: TC %d has unsupported TSA %u\n",
				   i, ets->tc_tsa[i]);
			return -EINVAL;
		}
		if (ets->tc_tx_bw[i] > 100) {
			netdev_err(dev, "invalid ETS: TC %d bandwidth %u%% > 100%%\n",
				   i, ets->tc_tx_bw[i]);
			return -EINVAL;
		}
	}

	if (have_ets_tc && bw_sum != 100) {
		netdev_err(dev, "invalid ETS: bandwidth of the ETS TCs sums to %d%%, not 100%%\n",
			   bw_sum);
		return -EINVAL;
	}
	return 0;
}

static int dcbsim_ieee_setets(struct net_device *dev, struct ieee_ets *ets)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	int err;

	if (dcbsim_should_fail(dev, DCBSIM_OP_ETS))
		return -EIO;
	err = dcbsim_validate_ets(dev, ets);
	if (err)
		return err;

	priv->ets = *ets;
	priv->ets.ets_cap = num_tc;
	priv->ets.cbs = 0;
	return 0;
}

static int dcbsim_ieee_getpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	*pfc = priv->pfc;
	return 0;
}

static int dcbsim_ieee_setpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (dcbsim_should_fail(dev, DCBSIM_OP_PFC))
		return -EIO;
	if (hweight8(pfc->pfc_en) > priv->pfc.pfc_cap) {
		netdev_err(dev, "invalid PFC: %d priorities enabled, pfc_cap is %u\n",
			   hweight8(pfc->pfc_en), priv->pfc.pfc_cap);
		return -EINVAL;
	}
	priv->pfc.pfc_en = pfc->pfc_en;
	priv->pfc.mbc = pfc->mbc;
	priv->pfc.delay = pfc->delay;
	return 0;
}

static int dcbsim_ieee_getmaxrate(struct net_device *dev, struct ieee_maxrate *maxrate)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	*maxrate = priv->maxrate;
	return 0;
}

static int dcbsim_ieee_setmaxrate(struct net_device *dev, struct ieee_maxrate *maxrate)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (dcbsim_should_fail(dev, DCBSIM_OP_MAXRATE))
		return -EIO;
	priv->maxrate = *maxrate;
	return 0;
}

static int dcbsim_validate_app(struct net_device *dev, const struct dcb_app *app)
{
	if (app->priority >= IEEE_8021Q_MAX_PRIORITIES) {
		netdev_err(dev, "invalid APP: priority %u\n", app->priority);
		return -EINVAL;
	}
	switch (app->selector) {
	case IEEE_8021QAZ_APP_SEL_ETHERTYPE:
	case IEEE_8021QAZ_APP_SEL_STREAM:
	case IEEE_8021QAZ_APP_SEL_DGRAM:
	case IEEE_8021QAZ_APP_SEL_ANY:
		return 0;
	case IEEE_8021QAZ_APP_SEL_DSCP:
		if (app->protocol >= DCBSIM_NUM_DSCP) {
			netdev_err(dev, "invalid APP: DSCP %u\n", app->protocol);
			return -EINVAL;
		}
		return 0;
	default:
		netdev_err(dev, "invalid APP: selector %u\n", app->selector);
		return -EINVAL;
	}
}

static int dcbsim_ieee_setapp(struct net_device *dev, struct dcb_app *app)
{
	int err;

	if (dcbsim_should_fail(dev, DCBSIM_OP_APP))
		return -EIO;
	err = dcbsim_validate_app(dev, app);
	if (err)
		return err;
	return dcb_ieee_setapp(dev, app);
}

static int dcbsim_ieee_delapp(struct net_device *dev, struct dcb_app *app)
{
	if (dcbsim_should_fail(dev, DCBSIM_OP_APP))
		return -EIO;
	return dcb_ieee_delapp(dev, app);
}

static int dcbsim_getbuffer(struct net_device *dev, struct dcbnl_buffer *buffer)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	*buffer = priv->buffer;
	return 0;
}

static int dcbsim_setbuffer(struct net_device *dev, struct dcbnl_buffer *buffer)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	u64 sum = 0;
	int i;

	if (dcbsim_should_fail(dev, DCBSIM_OP_BUFFER))
		return -EIO;
	for (i = 0; i < IEEE_8021Q_MAX_PRIORITIES; i++) {
		if (buffer->prio2buffer[i] >= DCBX_MAX_BUFFERS) {
			netdev_err(dev, "invalid buffer: priority %d to buffer %u\n",
				   i, buffer->prio2buffer[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < DCBX_MAX_BUFFERS; i++)
		sum += buffer->buffer_size[i];
	if (sum > DCBSIM_BUFFER_TOTAL) {
		netdev_err(dev, "invalid buffer: sizes sum to %llu > %u bytes\n",
			   sum, DCBSIM_BUFFER_TOTAL);
		return -EINVAL;
	}
	memcpy(priv->buffer.prio2buffer, buffer->prio2buffer, sizeof(buffer->prio2buffer));
	memcpy(priv->buffer.buffer_size, buffer->buffer_size, sizeof(buffer->buffer_size));
	return 0;
}

/* --- dcbnl: DCBX mode and capabilities -------------------------------------- */

static u8 dcbsim_getdcbx(struct net_device *dev)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	return priv->dcbx;
}

/* Host-managed IEEE only (no firmware LLDP agent, no CEE): 0 = accepted. */
static u8 dcbsim_setdcbx(struct net_device *dev, u8 mode)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (dcbsim_should_fail(dev, DCBSIM_OP_DCBX))
		return 1;
	if ((mode & DCB_CAP_DCBX_LLD_MANAGED) || (mode & DCB_CAP_DCBX_VER_CEE) ||
	    !(mode & DCB_CAP_DCBX_HOST) || !(mode & DCB_CAP_DCBX_VER_IEEE)) {
		netdev_err(dev, "unsupported DCBX mode 0x%x (host ieee only)\n", mode);
		return 1;
	}
	priv->dcbx = mode;
	return 0;
}

static u8 dcbsim_getcap(struct net_device *dev, int capid, u8 *cap)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	switch (capid) {
	case DCB_CAP_ATTR_PG:
	case DCB_CAP_ATTR_PFC:
		*cap = true;
		break;
	case DCB_CAP_ATTR_UP2TC:
	case DCB_CAP_ATTR_GSP:
	case DCB_CAP_ATTR_BCN:
		*cap = false;
		break;
	case DCB_CAP_ATTR_PG_TCS:
	case DCB_CAP_ATTR_PFC_TCS:
		*cap = 1 << (num_tc - 1);
		break;
	case DCB_CAP_ATTR_DCBX:
		*cap = priv->dcbx;
		break;
	default:
		*cap = 0;
		return 1;
	}
	return 0;
}

static const struct dcbnl_rtnl_ops dcbsim_dcbnl_ops = {
	.ieee_getets		= dcbsim_ieee_getets,
	.ieee_setets		= dcbsim_ieee_setets,
	.ieee_getmaxrate	= dcbsim_ieee_getmaxrate,
	.ieee_setmaxrate	= dcbsim_ieee_setmaxrate,
	.ieee_getpfc		= dcbsim_ieee_getpfc,
	.ieee_setpfc		= dcbsim_ieee_setpfc,
	.ieee_setapp		= dcbsim_ieee_setapp,
	.ieee_delapp		= dcbsim_ieee_delapp,
	.getdcbx		= dcbsim_getdcbx,
	.setdcbx		= dcbsim_setdcbx,
	.getcap			= dcbsim_getcap,
	.dcbnl_getbuffer	= dcbsim_getbuffer,
	.dcbnl_setbuffer	= dcbsim_setbuffer,
};

/* --- netdev ------------------------------------------------------------- */

static void dcbsim_count_tx(struct dcbsim_priv *priv, struct sk_buff *skb)
{
	int dscp = -1;
	u8 l4proto = 0;
	unsigned int l4off = 0;
	__be16 proto;

	if (skb->len < ETH_HLEN) {
		atomic64_inc(&priv->tx_other);
		return;
	}
	proto = eth_hdr(skb)->h_proto;
	if (proto == htons(ETH_P_IP)) {
		struct iphdr _iph;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, ETH_HLEN, sizeof(_iph), &_iph);
		if (iph) {
			dscp = ipv4_get_dsfield(iph) >> 2;
			l4proto = iph->protocol;
			l4off = ETH_HLEN + iph->ihl * 4;
		}
	} else if (proto == htons(ETH_P_IPV6)) {
		struct ipv6hdr _ip6h;
		const struct ipv6hdr *ip6h;

		ip6h = skb_header_pointer(skb, ETH_HLEN, sizeof(_ip6h), &_ip6h);
		if (ip6h) {
			dscp = ipv6_get_dsfield(ip6h) >> 2;
			l4proto = ip6h->nexthdr;
			l4off = ETH_HLEN + sizeof(*ip6h);
		}
	}

	if (dscp < 0) {
		atomic64_inc(&priv->tx_other);
	} else {
		atomic64_inc(&priv->tx_dscp[dscp]);
		if (l4proto == IPPROTO_UDP) {
			struct udphdr _uh;
			const struct udphdr *uh;

			uh = skb_header_pointer(skb, l4off, sizeof(_uh), &_uh);
			if (uh && uh->dest == htons(DCBSIM_ROCE_V2_PORT))
				atomic64_inc(&priv->tx_roce_v2);
		}
	}
	atomic64_inc(&priv->tx_prio[min_t(u32, skb->priority, DCBSIM_NUM_PRIO - 1)]);
}

/* Count the packet, then discard it: there is no wire behind a dcbsim. */
static netdev_tx_t dcbsim_start_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	atomic64_inc(&priv->tx_packets);
	atomic64_add(skb->len, &priv->tx_bytes);
	dcbsim_count_tx(priv, skb);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static int dcbsim_open(struct net_device *dev)
{
	netif_carrier_on(dev);
	netif_start_queue(dev);
	return 0;
}

static int dcbsim_stop(struct net_device *dev)
{
	netif_stop_queue(dev);
	netif_carrier_off(dev);
	return 0;
}

static int dcbsim_change_mtu(struct net_device *dev, int new_mtu)
{
	if (dcbsim_should_fail(dev, DCBSIM_OP_MTU))
		return -EIO;
	WRITE_ONCE(dev->mtu, new_mtu);
	return 0;
}

static void dcbsim_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *stats)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	stats->tx_packets = atomic64_read(&priv->tx_packets);
	stats->tx_bytes = atomic64_read(&priv->tx_bytes);
}

static const struct net_device_ops dcbsim_netdev_ops = {
	.ndo_open		= dcbsim_open,
	.ndo_stop		= dcbsim_stop,
	.ndo_start_xmit		= dcbsim_start_xmit,
	.ndo_change_mtu		= dcbsim_change_mtu,
	.ndo_get_stats64	= dcbsim_get_stats64,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
};

/* --- ethtool ------------------------------------------------------------ */

#define DCBSIM_NUM_STATS (3 + DCBSIM_NUM_DSCP + DCBSIM_NUM_PRIO)

static void dcbsim_get_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info)
{
	strscpy(info->driver, KBUILD_MODNAME, sizeof(info->driver));
	strscpy(info->bus_info, "dcbsim", sizeof(info->bus_info));
}

static int dcbsim_get_link_ksettings(struct net_device *dev,
				     struct ethtool_link_ksettings *ks)
{
	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ethtool_link_ksettings_add_link_mode(ks, supported, Pause);
	ks->base.speed = netif_carrier_ok(dev) ? speed : SPEED_UNKNOWN;
	ks->base.duplex = netif_carrier_ok(dev) ? DUPLEX_FULL : DUPLEX_UNKNOWN;
	ks->base.port = PORT_DA;
	ks->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

static void dcbsim_get_pauseparam(struct net_device *dev, struct ethtool_pauseparam *pause)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	pause->autoneg = AUTONEG_DISABLE;
	pause->rx_pause = priv->rx_pause;
	pause->tx_pause = priv->tx_pause;
}

static int dcbsim_set_pauseparam(struct net_device *dev, struct ethtool_pauseparam *pause)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (dcbsim_should_fail(dev, DCBSIM_OP_PAUSE))
		return -EIO;
	if (pause->autoneg)
		return -EINVAL;
	priv->rx_pause = !!pause->rx_pause;
	priv->tx_pause = !!pause->tx_pause;
	return 0;
}

static int dcbsim_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? DCBSIM_NUM_STATS : -EOPNOTSUPP;
}

static void dcbsim_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	int i;

	if (sset != ETH_SS_STATS)
		return;
	ethtool_sprintf(&data, "tx_packets");
	ethtool_sprintf(&data, "tx_roce_v2_packets");
	ethtool_sprintf(&data, "tx_non_ip_packets");
	for (i = 0; i < DCBSIM_NUM_DSCP; i++)
		ethtool_sprintf(&data, "tx_dscp%d_packets", i);
	for (i = 0; i < DCBSIM_NUM_PRIO; i++)
		ethtool_sprintf(&data, "tx_prio%d_packets", i);
}

static void dcbsim_get_ethtool_stats(struct net_device *dev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	int i;

	*data++ = atomic64_read(&priv->tx_packets);
	*data++ = atomic64_read(&priv->tx_roce_v2);
	*data++ = atomic64_read(&priv->tx_other);
	for (i = 0; i < DCBSIM_NUM_DSCP; i++)
		*data++ = atomic64_read(&priv->tx_dscp[i]);
	for (i = 0; i < DCBSIM_NUM_PRIO; i++)
		*data++ = atomic64_read(&priv->tx_prio[i]);
}

static const struct ethtool_ops dcbsim_ethtool_ops = {
	.get_drvinfo		= dcbsim_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= dcbsim_get_link_ksettings,
	.get_pauseparam		= dcbsim_get_pauseparam,
	.set_pauseparam		= dcbsim_set_pauseparam,
	.get_sset_count		= dcbsim_get_sset_count,
	.get_strings		= dcbsim_get_strings,
	.get_ethtool_stats	= dcbsim_get_ethtool_stats,
};

/* --- setup and module --------------------------------------------------- */

static void dcbsim_setup(struct net_device *dev)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	int i;

	ether_setup(dev);
	dev->netdev_ops = &dcbsim_netdev_ops;
	dev->ethtool_ops = &dcbsim_ethtool_ops;
#ifdef CONFIG_DCB
	dev->dcbnl_ops = &dcbsim_dcbnl_ops;
#endif
	dev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = DCBSIM_MAX_MTU;
	eth_hw_addr_random(dev);

	/* A freshly reset port: every priority on TC 0, strict priority,
	 * PFC off, global pause off, host-managed IEEE DCBX.
	 */
	memset(priv, 0, sizeof(*priv));
	priv->ets.ets_cap = num_tc;
	priv->pfc.pfc_cap = num_tc;
	priv->dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
	priv->buffer.total_size = DCBSIM_BUFFER_TOTAL;
	for (i = 0; i < DCBX_MAX_BUFFERS; i++)
		priv->buffer.buffer_size[i] = i ? 0 : DCBSIM_BUFFER_TOTAL;
}

static void dcbsim_destroy_all(void)
{
	int i;

	for (i = DCBSIM_MAX_DEVS - 1; i >= 0; i--) {
		if (!dcbsim_devs[i])
			continue;
		unregister_netdev(dcbsim_devs[i]);
		free_netdev(dcbsim_devs[i]);
		dcbsim_devs[i] = NULL;
	}
}

static int __init dcbsim_init(void)
{
	struct net_device *dev;
	unsigned int i;
	int err;

	if (!num_devs || num_devs > DCBSIM_MAX_DEVS) {
		pr_err("num_devs must be 1-%d\n", DCBSIM_MAX_DEVS);
		return -EINVAL;
	}
	if (!num_tc || num_tc > IEEE_8021QAZ_MAX_TCS) {
		pr_err("num_tc must be 1-%d\n", IEEE_8021QAZ_MAX_TCS);
		return -EINVAL;
	}

	for (i = 0; i < num_devs; i++) {
		dev = alloc_netdev(sizeof(struct dcbsim_priv), "dcbsim%d",
				   NET_NAME_ENUM, dcbsim_setup);
		if (!dev) {
			err = -ENOMEM;
			goto err_destroy;
		}
		netif_carrier_off(dev);
		err = register_netdev(dev);
		if (err) {
			free_netdev(dev);
			goto err_destroy;
		}
		dcbsim_devs[i] = dev;
	}
	pr_info("registered %u device(s), %u TCs each\n", num_devs, num_tc);
	return 0;

err_destroy:
	dcbsim_destroy_all();
	return err;
}

static void __exit dcbsim_exit(void)
{
	dcbsim_destroy_all();
}

module_init(dcbsim_init);
module_exit(dcbsim_exit);

MODULE_AUTHOR("rdma.fabric project");
MODULE_DESCRIPTION("Simulated Ethernet netdevs with in-memory IEEE DCB state (test device)");
MODULE_LICENSE("GPL");
