// SPDX-License-Identifier: GPL-2.0
/*
 * dcbsim - simulated Ethernet netdevs with an in-memory IEEE DCB state.
 *
 * A test device for the rdma.fabric lab, in the spirit of the kernel's
 * netdevsim: it registers N netdevs named dcbsimN whose dcbnl_rtnl_ops keep
 * IEEE 802.1Qaz ETS, PFC, maxrate, buffer and DCBX mode in memory, and whose
 * APP table lives in the kernel's own table (dcb_ieee_setapp/delapp), so that
 * iproute2 `dcb` round-trips through the real DCB netlink interface.
 * Transmitted packets are counted (per DSCP and per skb priority, see
 * `ethtool -S`) and discarded.  An rxe (Soft-RoCE) device can sit on top:
 * `rdma link add rxe0 type rxe netdev dcbsim0`.
 *
 * Personalities: each device follows the DCB rules of one driver, written
 * from that driver's source in Linux 6.1 (Debian linux-source-6.1), each
 * rule naming the function it comes from:
 *   generic  the kernel's own APP table, mlx5-like ETS/PFC validation (the
 *            behaviour dcbsim always had): one DSCP may map to several
 *            priorities; trust is "dscp" while any DSCP entry exists.
 *   mlx5     drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c: DSCP APP
 *            entries only; setapp replaces the DSCP's mapping; delapp of an
 *            entry that is not the DSCP's current mapping is -ENOENT; the
 *            first DSCP entry switches trust to DSCP, removing the last one
 *            switches back to PCP.
 *   ice      drivers/net/ethernet/intel/ice/ice_dcb_nl.c, ice_dcb_lib.c
 *            (software DCBX, i.e. the FW LLDP agent off): DSCP APP entries
 *            only; setapp of a DSCP that is already mapped is -EINVAL; the
 *            first DSCP entry switches the port to L3 DSCP mode (and resets
 *            ETS to its DSCP defaults), removing the last one switches back
 *            to L2 VLAN (PCP) mode with the driver's default DCB config.
 *
 * Module parameters:
 *   num_devs     number of netdevs (1-16, default 1)
 *   num_tc       traffic classes per device, reported as ets_cap/pfc_cap (1-8)
 *                (mlx5: max_tc + 1, ice: the function's maxtc)
 *   speed        link speed in Mb/s reported to ethtool (and so to rxe)
 *   personality  generic|mlx5|ice: one value for every device, or one per
 *                device (personality=generic,mlx5,ice with num_devs=3)
 *   fail         fault injection, writable at run time through
 *                /sys/module/dcbsim/parameters/fail: a comma-separated list of
 *                ets,pfc,app,dcbx,maxrate,buffer,mtu,pause (or "none"); every
 *                set operation of a listed kind fails with -EIO.
 *
 * Per device, /sys/class/net/dcbsimN/dcbsim/ holds (read-only): personality,
 * trust (pcp|dscp: what the device classifies received traffic by) and
 * dscp_prio (the DSCP -> priority table the device applies under DSCP trust).
 * Kernel 6.1 has no DCB netlink attribute for trust (apptrust came in 6.2),
 * so a test reads it here.
 *
 * Everything here runs under RTNL (dcbnl, ethtool and ndo_change_mtu are all
 * called with the RTNL lock held), which serialises access to the state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/device.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/sched/signal.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
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

enum dcbsim_personality {
	DCBSIM_GENERIC,
	DCBSIM_MLX5,
	DCBSIM_ICE,
	DCBSIM_NUM_PERSONALITIES,
};

static const char * const dcbsim_personality_names[DCBSIM_NUM_PERSONALITIES] = {
	[DCBSIM_GENERIC] = "generic",
	[DCBSIM_MLX5] = "mlx5",
	[DCBSIM_ICE] = "ice",
};

static char *personality[DCBSIM_MAX_DEVS];
static unsigned int num_personality;
module_param_array(personality, charp, &num_personality, 0444);
MODULE_PARM_DESC(personality,
		 "DCB rules of which driver: generic, mlx5 or ice; one value for every device or one per device (default generic)");

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

enum dcbsim_trust {
	DCBSIM_TRUST_PCP,
	DCBSIM_TRUST_DSCP,
};

/* mlx5: what en_dcbnl.c keeps in priv->dcbx, priv->dcbx_dp and firmware. */
struct dcbsim_mlx5 {
	u8 trust;				/* dcbx_dp.trust_state (QPTS register) */
	u8 dscp2prio[DCBSIM_NUM_DSCP];		/* dcbx_dp.dscp2prio (QPDPM register) */
	unsigned int dscp_app_cnt;		/* dcbx.dscp_app_cnt */
	u8 tc_tsa[IEEE_8021QAZ_MAX_TCS];	/* dcbx.tc_tsa */
	u8 tc_tx_bw[IEEE_8021QAZ_MAX_TCS];	/* as firmware reports it back */
	u8 dcbx_cap;				/* dcbx.cap */
	bool dcbx_fw;				/* dcbx.mode == MLX5E_DCBX_PARAM_VER_OPER_AUTO */
	u16 cable_len;				/* dcbx.cable_len, reported as the PFC delay */
};

/* ice: struct ice_dcbx_cfg (ice_type.h), the parts dcbnl reaches. */
#define DCBSIM_ICE_QOS_MODE_VLAN	0x0
#define DCBSIM_ICE_QOS_MODE_DSCP	0x1
#define DCBSIM_ICE_MAX_APPS		64		/* ICE_DCBX_MAX_APPS */
#define DCBSIM_ICE_BYTES_PER_DSCP_VAL	8		/* ICE_BYTES_PER_DSCP_VAL */
#define DCBSIM_ICE_TC_MAX_BW		100		/* ICE_TC_MAX_BW */
#define DCBSIM_ICE_DCBX_MODE_CEE	0x1
#define DCBSIM_ICE_DCBX_MODE_IEEE	0x2
/* ice_dcb_lib.h: what ice_pf_dcb_cfg() returns */
#define DCBSIM_ICE_DCB_HW_CHG_RST	0
#define DCBSIM_ICE_DCB_NO_HW_CHG	1
#define DCBSIM_ICE_DCB_HW_CHG		2

struct dcbsim_ice_ets_cfg {
	u8 willing;
	u8 cbs;
	u8 maxtcs;
	u8 prio_table[IEEE_8021QAZ_MAX_TCS];
	u8 tcbwtable[IEEE_8021QAZ_MAX_TCS];
	u8 tsatable[IEEE_8021QAZ_MAX_TCS];
};

struct dcbsim_ice_app {
	u16 prot_id;
	u8 priority;
	u8 selector;
};

struct dcbsim_ice_cfg {
	u32 numapps;
	struct dcbsim_ice_ets_cfg etscfg;
	struct dcbsim_ice_ets_cfg etsrec;
	struct {
		u8 willing;
		u8 mbc;
		u8 pfccap;
		u8 pfcena;
	} pfc;
	u8 pfc_mode;
	u8 dcbx_mode;
	struct dcbsim_ice_app app[DCBSIM_ICE_MAX_APPS];
	DECLARE_BITMAP(dscp_mapped, DCBSIM_NUM_DSCP);
	u8 dscp_map[DCBSIM_NUM_DSCP];
};

/* ice keeps two configurations: dcbnl ops edit "desired" and commit it to
 * "local" (the one the getters report) through ice_pf_dcb_cfg().
 */
struct dcbsim_ice {
	struct dcbsim_ice_cfg local;		/* qos_cfg.local_dcbx_cfg */
	struct dcbsim_ice_cfg desired;		/* qos_cfg.desired_dcbx_cfg */
	u8 hw_pfc_mode;				/* ice_aq_set_pfc_mode(): VLAN or DSCP */
	u8 dcbx_cap;				/* pf->dcbx_cap */
};

struct dcbsim_priv {
	enum dcbsim_personality pers;
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	struct ieee_maxrate maxrate;
	struct dcbnl_buffer buffer;
	u8 dcbx;
	struct dcbsim_mlx5 mlx5;
	struct dcbsim_ice ice;
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

/* --- dcbnl: generic personality (IEEE 802.1Qaz) ---------------------------- */

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

/* --- dcbnl: DCBX mode and capabilities (generic) ----------------------------- */

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

static const struct dcbnl_rtnl_ops dcbsim_generic_dcbnl_ops = {
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

/* --- dcbnl: mlx5 personality (mlx5/core/en_dcbnl.c) ---------------------------
 *
 * The port as the mlx5e driver shows it through DCB netlink, firmware
 * registers included (a ConnectX whose firmware accepts what the driver
 * sends).  Not modelled: the link toggle of a PFC change, port buffer
 * auto-configuration, CEE ops; a dcbsim reload is a power cycle (mlx5's
 * firmware would keep trust and dscp2prio over a driver reload and
 * mlx5e_dcbnl_init_app() would then re-create the 64 APP entries).
 */
#define DCBSIM_MLX5_MAX_CABLE_LENGTH	1000	/* MLX5E_MAX_CABLE_LENGTH */
#define DCBSIM_MLX5_DEFAULT_CABLE_LEN	7	/* MLX5E_DEFAULT_CABLE_LEN */
#define DCBSIM_MLX5_100MB		100000ULL	/* MLX5E_100MB, in Kb/s */
#define DCBSIM_MLX5_1GB			1000000ULL	/* MLX5E_1GB */

static void dcbsim_mlx5_set_trust(struct net_device *dev, u8 trust)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (priv->mlx5.trust != trust)
		netdev_info(dev, "mlx5: trust state %s\n",
			    trust == DCBSIM_TRUST_DSCP ? "dscp" : "pcp");
	priv->mlx5.trust = trust;
}

/* mlx5e_dcbnl_ieee_getets(): the driver's tc_tsa; firmware reports 100% for
 * strict and vendor TCs, which the driver reports as 0.
 */
static int dcbsim_mlx5_getets(struct net_device *dev, struct ieee_ets *ets)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	memcpy(ets->prio_tc, priv->ets.prio_tc, sizeof(ets->prio_tc));
	ets->ets_cap = num_tc;
	memcpy(ets->tc_tx_bw, priv->mlx5.tc_tx_bw, sizeof(ets->tc_tx_bw));
	memcpy(ets->tc_tsa, priv->mlx5.tc_tsa, sizeof(ets->tc_tsa));
	return 0;
}

/* mlx5e_dbcnl_validate_ets(): a priority mapped to TC >= 8, a CBS TC
 * (-EOPNOTSUPP), ETS TCs not summing to 100%.  dcbsim adds what the
 * firmware would refuse: a TC the device does not have, an unknown TSA
 * (mlx5e_build_tc_group() leaves those groups unset).
 */
static int dcbsim_mlx5_validate_ets(struct net_device *dev, const struct ieee_ets *ets)
{
	bool have_ets_tc = false;
	int bw_sum = 0;
	int i;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (ets->prio_tc[i] >= IEEE_8021QAZ_MAX_TCS) {
			netdev_err(dev, "Failed to validate ETS: priority value greater than max(%d)\n",
				   IEEE_8021QAZ_MAX_TCS);
			return -EINVAL;
		}
		if (ets->prio_tc[i] >= num_tc) {
			netdev_err(dev, "invalid ETS: priority %d mapped to TC %u, device has %u TCs\n",
				   i, ets->prio_tc[i], num_tc);
			return -EINVAL;
		}
	}
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (ets->tc_tsa[i] == IEEE_8021QAZ_TSA_CB_SHAPER) {
			netdev_err(dev, "Failed to validate ETS: CB Shaper is not supported\n");
			return -EOPNOTSUPP;
		}
	}
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		switch (ets->tc_tsa[i]) {
		case IEEE_8021QAZ_TSA_STRICT:
		case IEEE_8021QAZ_TSA_VENDOR:
			break;
		case IEEE_8021QAZ_TSA_ETS:
			have_ets_tc = true;
			bw_sum += ets->tc_tx_bw[i];
			break;
		default:
			netdev_err(dev, "invalid ETS: TC %d has unsupported TSA %u\n",
				   i, ets->tc_tsa[i]);
			return -EINVAL;
		}
	}
	if (have_ets_tc && bw_sum != 100) {
		netdev_err(dev, "Failed to validate ETS: BW sum is illegal\n");
		return -EINVAL;
	}
	return 0;
}

/* mlx5e_dcbnl_ieee_setets() -> mlx5e_dcbnl_ieee_setets_core(): only TCs up
 * to max_tc reach firmware (mlx5e_build_tc_tx_bw(): strict and vendor get
 * 100%, which getets reports as 0).
 */
static int dcbsim_mlx5_setets(struct net_device *dev, struct ieee_ets *ets)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	int err;
	int i;

	if (dcbsim_should_fail(dev, DCBSIM_OP_ETS))
		return -EIO;
	err = dcbsim_mlx5_validate_ets(dev, ets);
	if (err)
		return err;

	memcpy(priv->ets.prio_tc, ets->prio_tc, sizeof(ets->prio_tc));
	memcpy(priv->mlx5.tc_tsa, ets->tc_tsa, sizeof(ets->tc_tsa));
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		priv->mlx5.tc_tx_bw[i] = (i < num_tc && ets->tc_tsa[i] == IEEE_8021QAZ_TSA_ETS) ?
					 ets->tc_tx_bw[i] : 0;
	return 0;
}

/* mlx5e_dcbnl_ieee_getpfc(): pfc_cap = max_tc + 1, delay = cable length. */
static int dcbsim_mlx5_getpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	pfc->pfc_cap = num_tc;
	pfc->pfc_en = priv->pfc.pfc_en;
	pfc->delay = priv->mlx5.cable_len;
	return 0;
}

/* mlx5e_dcbnl_ieee_setpfc(): no check of the enabled priorities; a delay
 * (cable length) is taken only when 0 < delay < 1000 m; mbc is not kept.
 */
static int dcbsim_mlx5_setpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (dcbsim_should_fail(dev, DCBSIM_OP_PFC))
		return -EIO;
	priv->pfc.pfc_en = pfc->pfc_en;
	if (pfc->delay && pfc->delay < DCBSIM_MLX5_MAX_CABLE_LENGTH)
		priv->mlx5.cable_len = pfc->delay;
	return 0;
}

/* mlx5e_dcbnl_ieee_setmaxrate(): up to 25.5 Gb/s in 100 Mb/s units (at
 * least one), up to 255 Gb/s in 1 Gb/s units, above that -EINVAL; TCs
 * beyond max_tc are not set.  getmaxrate reads the units back.
 */
static int dcbsim_mlx5_setmaxrate(struct net_device *dev, struct ieee_maxrate *maxrate)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	u64 rate[IEEE_8021QAZ_MAX_TCS] = {};
	u64 r;
	int i;

	if (dcbsim_should_fail(dev, DCBSIM_OP_MAXRATE))
		return -EIO;
	for (i = 0; i < num_tc; i++) {
		r = maxrate->tc_maxrate[i];
		if (!r)
			continue;
		if (r <= 255 * DCBSIM_MLX5_100MB) {
			r = div_u64(r, DCBSIM_MLX5_100MB);
			rate[i] = (r ? r : 1) * DCBSIM_MLX5_100MB;
		} else if (r <= 255 * DCBSIM_MLX5_1GB) {
			rate[i] = div_u64(r, DCBSIM_MLX5_1GB) * DCBSIM_MLX5_1GB;
		} else {
			netdev_err(dev, "tc_%d maxrate %llu Kbps exceeds limit %llu\n",
				   i, r, 255 * DCBSIM_MLX5_1GB);
			return -EINVAL;
		}
	}
	memcpy(priv->maxrate.tc_maxrate, rate, sizeof(rate));
	return 0;
}

/* mlx5e_dcbnl_ieee_setapp(): DSCP entries only.  The DSCP's current
 * mapping (firmware dscp2prio) is deleted from the APP table and the new
 * one added: a set replaces.  The first DSCP entry switches trust to DSCP.
 */
static int dcbsim_mlx5_setapp(struct net_device *dev, struct dcb_app *app)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcb_app temp;
	bool is_new;
	int err;

	if (dcbsim_should_fail(dev, DCBSIM_OP_APP))
		return -EIO;
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP || app->protocol >= DCBSIM_NUM_DSCP)
		return -EINVAL;
	/* dcbsim's own bound: mlx5 hands the priority to firmware unchecked */
	if (app->priority >= IEEE_8021Q_MAX_PRIORITIES)
		return -EINVAL;

	temp.selector = IEEE_8021QAZ_APP_SEL_DSCP;
	temp.protocol = app->protocol;
	temp.priority = priv->mlx5.dscp2prio[app->protocol];

	if (!priv->mlx5.dscp_app_cnt)
		dcbsim_mlx5_set_trust(dev, DCBSIM_TRUST_DSCP);

	priv->mlx5.dscp2prio[app->protocol] = app->priority;

	is_new = dcb_ieee_delapp(dev, &temp) != 0;
	err = dcb_ieee_setapp(dev, app);
	if (err)
		return err;
	if (is_new)
		priv->mlx5.dscp_app_cnt++;
	return 0;
}

/* mlx5e_dcbnl_ieee_delapp(): only the DSCP's current mapping can go
 * (anything else is -ENOENT); firmware maps the DSCP to priority 0 then;
 * removing the last DSCP entry switches trust back to PCP.
 */
static int dcbsim_mlx5_delapp(struct net_device *dev, struct dcb_app *app)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	int err;

	if (dcbsim_should_fail(dev, DCBSIM_OP_APP))
		return -EIO;
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP || app->protocol >= DCBSIM_NUM_DSCP)
		return -EINVAL;
	if (!priv->mlx5.dscp_app_cnt)
		return -ENOENT;
	if (app->priority != priv->mlx5.dscp2prio[app->protocol])
		return -ENOENT;

	err = dcb_ieee_delapp(dev, app);
	if (err)
		return err;
	priv->mlx5.dscp2prio[app->protocol] = 0;
	priv->mlx5.dscp_app_cnt--;
	if (!priv->mlx5.dscp_app_cnt)
		dcbsim_mlx5_set_trust(dev, DCBSIM_TRUST_PCP);
	return 0;
}

static u8 dcbsim_mlx5_getdcbx(struct net_device *dev)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	return priv->mlx5.dcbx_cap;
}

/* mlx5e_dcbnl_setdcbx(): LLD-managed refused; 0 hands DCBX to firmware;
 * anything with HOST takes the mode as given (CEE and IEEE both fine).
 */
static u8 dcbsim_mlx5_setdcbx(struct net_device *dev, u8 mode)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (dcbsim_should_fail(dev, DCBSIM_OP_DCBX))
		return 1;
	if (mode & DCB_CAP_DCBX_LLD_MANAGED)
		return 1;
	if (!mode) {
		priv->mlx5.dcbx_fw = true;
		priv->mlx5.dcbx_cap &= ~DCB_CAP_DCBX_HOST;
		return 0;
	}
	if (!(mode & DCB_CAP_DCBX_HOST))
		return 1;
	priv->mlx5.dcbx_fw = false;
	priv->mlx5.dcbx_cap = mode;
	return 0;
}

/* mlx5e_dcbnl_getcap() */
static u8 dcbsim_mlx5_getcap(struct net_device *dev, int capid, u8 *cap)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (capid == DCB_CAP_ATTR_DCBX) {
		*cap = priv->mlx5.dcbx_cap | DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE;
		return 0;
	}
	return dcbsim_getcap(dev, capid, cap);
}

static const struct dcbnl_rtnl_ops dcbsim_mlx5_dcbnl_ops = {
	.ieee_getets		= dcbsim_mlx5_getets,
	.ieee_setets		= dcbsim_mlx5_setets,
	.ieee_getmaxrate	= dcbsim_ieee_getmaxrate,
	.ieee_setmaxrate	= dcbsim_mlx5_setmaxrate,
	.ieee_getpfc		= dcbsim_mlx5_getpfc,
	.ieee_setpfc		= dcbsim_mlx5_setpfc,
	.ieee_setapp		= dcbsim_mlx5_setapp,
	.ieee_delapp		= dcbsim_mlx5_delapp,
	.getdcbx		= dcbsim_mlx5_getdcbx,
	.setdcbx		= dcbsim_mlx5_setdcbx,
	.getcap			= dcbsim_mlx5_getcap,
	.dcbnl_getbuffer	= dcbsim_getbuffer,
	.dcbnl_setbuffer	= dcbsim_setbuffer,
};

/* mlx5e_dcbnl_initialize(), mlx5e_ets_init(): host DCBX (CEE and IEEE),
 * cable length 7 m, every TC vendor with prio_tc 1,0,2,3,...; trust PCP.
 * The firmware DSCP table's default is DSCP >> 3 (what mlnx-tools'
 * setDefaultAppEntry() calls "firmware default").
 */
static void dcbsim_mlx5_init(struct dcbsim_priv *priv)
{
	int i;

	priv->mlx5.trust = DCBSIM_TRUST_PCP;
	for (i = 0; i < DCBSIM_NUM_DSCP; i++)
		priv->mlx5.dscp2prio[i] = i >> 3;
	priv->mlx5.dcbx_cap = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE;
	priv->mlx5.cable_len = DCBSIM_MLX5_DEFAULT_CABLE_LEN;
	memset(priv->ets.prio_tc, 0, sizeof(priv->ets.prio_tc));
	for (i = 0; i < num_tc; i++) {
		priv->mlx5.tc_tsa[i] = IEEE_8021QAZ_TSA_VENDOR;
		priv->ets.prio_tc[i] = i;
	}
	if (num_tc > 1) {
		priv->ets.prio_tc[0] = 1;
		priv->ets.prio_tc[1] = 0;
	}
}

/* --- dcbnl: ice personality (ice/ice_dcb_nl.c, ice_dcb_lib.c) -----------------
 *
 * An E810 port with the firmware LLDP agent off (ethtool priv flag
 * fw-lldp-agent off: software DCBX, host IEEE), the only mode in which ice
 * takes DCB settings from netlink.  Not modelled: the firmware LLDP agent,
 * the interface reset (dev_close/dev_open) after each change, CEE ops; the
 * PFC delay register reads 0.  Firmware is assumed to accept what the
 * driver commits.
 */

/* ice_dcb_get_num_tc(): contiguous TCs from TC0 that prio_table uses;
 * non-contiguous TCs count as 1.
 */
static u8 dcbsim_ice_num_tc(struct net_device *dev, const struct dcbsim_ice_cfg *cfg)
{
	bool tc_unused = false;
	u8 used = 0;
	u8 ret = 0;
	int i;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		used |= BIT(cfg->etscfg.prio_table[i]);
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (used & BIT(i)) {
			if (tc_unused) {
				netdev_err(dev, "Non-contiguous TCs - Disabling DCB\n");
				return 1;
			}
			ret++;
		} else {
			tc_unused = true;
		}
	}
	return ret ? ret : 1;
}

/* ice_dcb_bwchk(): one TC gets 100%; otherwise the bandwidths of the TCs in
 * use (whatever their TSA; summed in a u8, as the driver does) must be 100,
 * or all 0 (then TC0 gets 100%).
 */
static int dcbsim_ice_bwchk(struct net_device *dev, struct dcbsim_ice_cfg *cfg)
{
	struct dcbsim_ice_ets_cfg *etscfg = &cfg->etscfg;
	u8 num_tc_used, total_bw = 0;
	int i;

	num_tc_used = dcbsim_ice_num_tc(dev, cfg);
	if (num_tc_used == 1) {
		etscfg->tcbwtable[0] = DCBSIM_ICE_TC_MAX_BW;
		return 0;
	}
	for (i = 0; i < num_tc_used; i++)
		total_bw += etscfg->tcbwtable[i];
	if (!total_bw) {
		etscfg->tcbwtable[0] = DCBSIM_ICE_TC_MAX_BW;
	} else if (total_bw != DCBSIM_ICE_TC_MAX_BW) {
		netdev_err(dev, "Invalid config, total bandwidth must equal 100\n");
		return -EINVAL;
	}
	return 0;
}

/* ice_dcb_tc_contig() */
static bool dcbsim_ice_tc_contig(const u8 *prio_table)
{
	bool found_empty = false;
	u8 used_tc = 0;
	int i;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		used_tc |= BIT(prio_table[i]);
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (used_tc & BIT(i)) {
			if (found_empty)
				return false;
		} else {
			found_empty = true;
		}
	}
	return true;
}

static int dcbsim_ice_sw_dflt_cfg(struct net_device *dev, bool ets_willing);

/* ice_pf_dcb_cfg(): nothing to do when new equals local; else bwchk, copy
 * to local (ETS recommendation := ETS config), then ice_pf_dcb_recfg():
 * non-contiguous TCs get the default config (ice_dcb_noncontig_cfg()).
 */
static int dcbsim_ice_pf_dcb_cfg(struct net_device *dev, struct dcbsim_ice_cfg *new_cfg)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcbsim_ice_cfg *curr = &priv->ice.local;

	if (!memcmp(new_cfg, curr, sizeof(*new_cfg)))
		return DCBSIM_ICE_DCB_NO_HW_CHG;
	if (dcbsim_ice_bwchk(dev, new_cfg))
		return -EINVAL;

	memcpy(curr, new_cfg, sizeof(*curr));
	memcpy(&curr->etsrec, &curr->etscfg, sizeof(curr->etsrec));
	memcpy(&new_cfg->etsrec, &curr->etscfg, sizeof(new_cfg->etsrec));

	if (!dcbsim_ice_tc_contig(curr->etscfg.prio_table)) {
		/* ice_dcb_noncontig_cfg() */
		dcbsim_ice_sw_dflt_cfg(dev, false);
		curr->etscfg.willing = 1;
	}
	return DCBSIM_ICE_DCB_HW_CHG_RST;
}

/* ice_dcb_sw_dflt_cfg(): local cleared, then TC0 ETS 100%, PFC off and
 * willing, FCoE APP (internal list only) committed.
 */
static int dcbsim_ice_sw_dflt_cfg(struct net_device *dev, bool ets_willing)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcbsim_ice_cfg *dcbcfg;
	int ret;

	dcbcfg = kzalloc(sizeof(*dcbcfg), GFP_KERNEL);
	if (!dcbcfg)
		return -ENOMEM;
	memset(&priv->ice.local, 0, sizeof(priv->ice.local));

	dcbcfg->etscfg.willing = ets_willing ? 1 : 0;
	dcbcfg->etscfg.maxtcs = num_tc;
	dcbcfg->etscfg.tcbwtable[0] = 100;
	dcbcfg->etscfg.tsatable[0] = IEEE_8021QAZ_TSA_ETS;
	memcpy(&dcbcfg->etsrec, &dcbcfg->etscfg, sizeof(dcbcfg->etsrec));
	dcbcfg->etsrec.willing = 0;
	dcbcfg->pfc.willing = 1;
	dcbcfg->pfc.pfccap = num_tc;
	dcbcfg->numapps = 1;
	dcbcfg->app[0].selector = IEEE_8021QAZ_APP_SEL_ETHERTYPE;
	dcbcfg->app[0].priority = 3;
	dcbcfg->app[0].prot_id = ETH_P_FCOE;

	ret = dcbsim_ice_pf_dcb_cfg(dev, dcbcfg);
	kfree(dcbcfg);
	return ret;
}

static bool dcbsim_ice_ieee_blocked(const struct dcbsim_priv *priv)
{
	return (priv->ice.dcbx_cap & DCB_CAP_DCBX_LLD_MANAGED) ||
	       !(priv->ice.dcbx_cap & DCB_CAP_DCBX_VER_IEEE);
}

/* ice_dcbnl_getets() */
static int dcbsim_ice_getets(struct net_device *dev, struct ieee_ets *ets)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	const struct dcbsim_ice_cfg *cfg = &priv->ice.local;

	ets->willing = cfg->etscfg.willing;
	ets->ets_cap = cfg->etscfg.maxtcs;
	ets->cbs = cfg->etscfg.cbs;
	memcpy(ets->tc_tx_bw, cfg->etscfg.tcbwtable, sizeof(ets->tc_tx_bw));
	memcpy(ets->tc_rx_bw, cfg->etscfg.tcbwtable, sizeof(ets->tc_rx_bw));
	memcpy(ets->tc_tsa, cfg->etscfg.tsatable, sizeof(ets->tc_tsa));
	memcpy(ets->prio_tc, cfg->etscfg.prio_table, sizeof(ets->prio_tc));
	memcpy(ets->tc_reco_bw, cfg->etsrec.tcbwtable, sizeof(ets->tc_reco_bw));
	memcpy(ets->tc_reco_tsa, cfg->etsrec.tsatable, sizeof(ets->tc_reco_tsa));
	memcpy(ets->reco_prio_tc, cfg->etscfg.prio_table, sizeof(ets->reco_prio_tc));
	return 0;
}

/* ice_dcbnl_setets(): edits "desired" (even when the check then fails);
 * in DSCP mode prio_tc is ignored ("up->tc mapping cannot change"); no TSA
 * check; ice_dcb_bwchk(); all-zero bandwidths give TC0 100%.
 */
static int dcbsim_ice_setets(struct net_device *dev, struct ieee_ets *ets)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcbsim_ice_cfg *new_cfg = &priv->ice.desired;
	int bwcfg = 0, bwrec = 0;
	int err, i;

	if (dcbsim_should_fail(dev, DCBSIM_OP_ETS))
		return -EIO;
	if (dcbsim_ice_ieee_blocked(priv))
		return -EINVAL;
	/* dcbsim's own bound (array index); iproute2 refuses these as well */
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		if (ets->prio_tc[i] >= IEEE_8021QAZ_MAX_TCS || ets->reco_prio_tc[i] >= IEEE_8021QAZ_MAX_TCS)
			return -EINVAL;

	new_cfg->etscfg.willing = ets->willing;
	new_cfg->etscfg.cbs = ets->cbs;
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		new_cfg->etscfg.tcbwtable[i] = ets->tc_tx_bw[i];
		bwcfg += ets->tc_tx_bw[i];
		new_cfg->etscfg.tsatable[i] = ets->tc_tsa[i];
		if (new_cfg->pfc_mode == DCBSIM_ICE_QOS_MODE_VLAN) {
			new_cfg->etscfg.prio_table[i] = ets->prio_tc[i];
			new_cfg->etsrec.prio_table[i] = ets->reco_prio_tc[i];
		}
		new_cfg->etsrec.tcbwtable[i] = ets->tc_reco_bw[i];
		bwrec += ets->tc_reco_bw[i];
		new_cfg->etsrec.tsatable[i] = ets->tc_reco_tsa[i];
	}

	if (dcbsim_ice_bwchk(dev, new_cfg))
		return -EINVAL;

	new_cfg->etscfg.maxtcs = num_tc;
	if (!bwcfg)
		new_cfg->etscfg.tcbwtable[0] = 100;
	if (!bwrec)
		new_cfg->etsrec.tcbwtable[0] = 100;

	err = dcbsim_ice_pf_dcb_cfg(dev, new_cfg);
	if (err == DCBSIM_ICE_DCB_NO_HW_CHG)
		err = DCBSIM_ICE_DCB_HW_CHG_RST;
	return err;
}

/* ice_dcbnl_getpfc() */
static int dcbsim_ice_getpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	const struct dcbsim_ice_cfg *cfg = &priv->ice.local;

	pfc->pfc_cap = cfg->pfc.pfccap;
	pfc->pfc_en = cfg->pfc.pfcena;
	pfc->mbc = cfg->pfc.mbc;
	pfc->delay = 0;
	return 0;
}

/* ice_dcbnl_setpfc(): pfc_cap as given (0: maxtc), pfc_en as given, no
 * check of the count; commits "desired" (its ETS included).
 */
static int dcbsim_ice_setpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcbsim_ice_cfg *new_cfg = &priv->ice.desired;
	int err;

	if (dcbsim_should_fail(dev, DCBSIM_OP_PFC))
		return -EIO;
	if (dcbsim_ice_ieee_blocked(priv))
		return -EINVAL;

	new_cfg->pfc.pfccap = pfc->pfc_cap ? pfc->pfc_cap : num_tc;
	new_cfg->pfc.pfcena = pfc->pfc_en;

	err = dcbsim_ice_pf_dcb_cfg(dev, new_cfg);
	if (err == DCBSIM_ICE_DCB_NO_HW_CHG)
		err = DCBSIM_ICE_DCB_HW_CHG_RST;
	return err;
}

/* ice_dcbnl_setapp(): DSCP only, priority below maxtc; the kernel table
 * first (an identical entry is -EEXIST), then a DSCP already mapped is
 * -EINVAL ("already user mapped", the new entry removed again).  The first
 * DSCP entry switches the port to L3 DSCP mode with the DSCP defaults:
 * ETS TC0 100%, every TC ets, prio_tc identity, ETS and PFC not willing.
 */
static int dcbsim_ice_setapp(struct net_device *dev, struct dcb_app *app)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcbsim_ice_cfg *new_cfg = &priv->ice.desired;
	struct dcbsim_ice_cfg *old_cfg = &priv->ice.local;
	u8 max_tc = num_tc;
	int ret, i, j;

	if (dcbsim_should_fail(dev, DCBSIM_OP_APP))
		return -EIO;
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP)
		return -EINVAL;
	if (priv->ice.dcbx_cap & DCB_CAP_DCBX_LLD_MANAGED) {
		netdev_err(dev, "can't do DSCP QoS when FW DCB agent active\n");
		return -EINVAL;
	}
	if (!(priv->ice.dcbx_cap & DCB_CAP_DCBX_VER_IEEE))
		return -EINVAL;
	if (app->protocol >= DCBSIM_NUM_DSCP) {
		netdev_err(dev, "DSCP value 0x%04X out of range\n", app->protocol);
		return -EINVAL;
	}
	if (app->priority >= max_tc) {
		netdev_err(dev, "TC %d out of range, max TC %d\n", app->priority, max_tc);
		return -EINVAL;
	}

	ret = dcb_ieee_setapp(dev, app);
	if (ret)
		return ret;

	if (test_and_set_bit(app->protocol, new_cfg->dscp_mapped)) {
		netdev_err(dev, "DSCP value 0x%04X already user mapped\n", app->protocol);
		ret = dcb_ieee_delapp(dev, app);
		if (ret)
			netdev_err(dev, "Failed to delete re-mapping TLV\n");
		return -EINVAL;
	}

	if (old_cfg->pfc_mode == DCBSIM_ICE_QOS_MODE_VLAN) {
		priv->ice.hw_pfc_mode = DCBSIM_ICE_QOS_MODE_DSCP;
		netdev_info(dev, "Switched QoS to L3 DSCP mode\n");
		new_cfg->pfc_mode = DCBSIM_ICE_QOS_MODE_DSCP;
		new_cfg->etscfg.willing = 0;
		new_cfg->pfc.pfccap = max_tc;
		new_cfg->pfc.willing = 0;
		for (i = 0; i < max_tc; i++)
			for (j = 0; j < DCBSIM_ICE_BYTES_PER_DSCP_VAL; j++) {
				int dscp = i * max_tc + j;
				int offset = max_tc * DCBSIM_ICE_BYTES_PER_DSCP_VAL;

				/* bounds: the driver writes past the table for 5-7 TCs */
				if (dscp < DCBSIM_NUM_DSCP)
					new_cfg->dscp_map[dscp] = i;
				if (max_tc < IEEE_8021QAZ_MAX_TCS && dscp + offset < DCBSIM_NUM_DSCP)
					new_cfg->dscp_map[dscp + offset] = i;
			}
		new_cfg->etscfg.tcbwtable[0] = 100;
		new_cfg->etscfg.tsatable[0] = IEEE_8021QAZ_TSA_ETS;
		new_cfg->etscfg.prio_table[0] = 0;
		for (i = 1; i < max_tc; i++) {
			new_cfg->etscfg.tcbwtable[i] = 0;
			new_cfg->etscfg.tsatable[i] = IEEE_8021QAZ_TSA_ETS;
			new_cfg->etscfg.prio_table[i] = i;
		}
	}

	new_cfg->dscp_map[app->protocol] = app->priority;
	if (new_cfg->numapps < DCBSIM_ICE_MAX_APPS) {
		new_cfg->app[new_cfg->numapps].selector = app->selector;
		new_cfg->app[new_cfg->numapps].prot_id = app->protocol;
		new_cfg->app[new_cfg->numapps].priority = app->priority;
		new_cfg->numapps++;
	}

	ret = dcbsim_ice_pf_dcb_cfg(dev, new_cfg);
	if (ret != DCBSIM_ICE_DCB_HW_CHG_RST)
		ret = DCBSIM_ICE_DCB_NO_HW_CHG;
	return ret;
}

/* ice_dcbnl_delapp(): the DSCP goes back to its default (DSCP % 8); when
 * the last DSCP entry goes, the port switches to L2 VLAN mode and gets
 * the default config (ice_dcb_sw_dflt_cfg(): ETS TC0 100%, PFC off).
 */
static int dcbsim_ice_delapp(struct net_device *dev, struct dcb_app *app)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcbsim_ice_cfg *old_cfg = &priv->ice.local;
	struct dcbsim_ice_cfg *new_cfg = &priv->ice.desired;
	unsigned int i, j;
	int ret;

	if (dcbsim_should_fail(dev, DCBSIM_OP_APP))
		return -EIO;
	if (priv->ice.dcbx_cap & DCB_CAP_DCBX_LLD_MANAGED) {
		netdev_err(dev, "can't delete DSCP netlink app when FW DCB agent is active\n");
		return -EINVAL;
	}

	ret = dcb_ieee_delapp(dev, app);
	if (ret)
		return ret;

	for (i = 0; i < new_cfg->numapps; i++) {
		if (app->selector == new_cfg->app[i].selector &&
		    app->protocol == new_cfg->app[i].prot_id &&
		    app->priority == new_cfg->app[i].priority) {
			new_cfg->app[i].selector = 0;
			new_cfg->app[i].prot_id = 0;
			new_cfg->app[i].priority = 0;
			break;
		}
	}
	if (i == new_cfg->numapps)
		return -EINVAL;

	new_cfg->numapps--;
	/* the driver shifts the rest down from the local (not desired) list */
	for (j = i; j < new_cfg->numapps && j + 1 < DCBSIM_ICE_MAX_APPS; j++) {
		new_cfg->app[j].selector = old_cfg->app[j + 1].selector;
		new_cfg->app[j].prot_id = old_cfg->app[j + 1].prot_id;
		new_cfg->app[j].priority = old_cfg->app[j + 1].priority;
	}

	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP)
		return DCBSIM_ICE_DCB_HW_CHG;

	clear_bit(app->protocol, new_cfg->dscp_mapped);
	new_cfg->dscp_map[app->protocol] = app->protocol % DCBSIM_ICE_BYTES_PER_DSCP_VAL;

	if (bitmap_empty(new_cfg->dscp_mapped, DCBSIM_NUM_DSCP) &&
	    new_cfg->pfc_mode == DCBSIM_ICE_QOS_MODE_DSCP) {
		priv->ice.hw_pfc_mode = DCBSIM_ICE_QOS_MODE_VLAN;
		netdev_info(dev, "Switched QoS to L2 VLAN mode\n");
		new_cfg->pfc_mode = DCBSIM_ICE_QOS_MODE_VLAN;
		ret = dcbsim_ice_sw_dflt_cfg(dev, true);
	} else {
		ret = dcbsim_ice_pf_dcb_cfg(dev, new_cfg);
	}
	if (ret == DCBSIM_ICE_DCB_NO_HW_CHG)
		ret = DCBSIM_ICE_DCB_HW_CHG;
	return ret;
}

static u8 dcbsim_ice_getdcbx(struct net_device *dev)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	return priv->ice.dcbx_cap;
}

/* ice_dcbnl_setdcbx(): host only, IEEE or CEE (not both); the mode it
 * already has, or any change while in DSCP mode, is refused (1).
 */
static u8 dcbsim_ice_setdcbx(struct net_device *dev, u8 mode)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	if (dcbsim_should_fail(dev, DCBSIM_OP_DCBX))
		return 1;
	if ((mode & DCB_CAP_DCBX_LLD_MANAGED) ||
	    ((mode & DCB_CAP_DCBX_VER_IEEE) && (mode & DCB_CAP_DCBX_VER_CEE)) ||
	    !(mode & DCB_CAP_DCBX_HOST))
		return DCBSIM_ICE_DCB_NO_HW_CHG;
	if (mode == priv->ice.dcbx_cap)
		return DCBSIM_ICE_DCB_NO_HW_CHG;
	if (priv->ice.local.pfc_mode == DCBSIM_ICE_QOS_MODE_DSCP)
		return DCBSIM_ICE_DCB_NO_HW_CHG;
	priv->ice.dcbx_cap = mode;
	priv->ice.local.dcbx_mode = (mode & DCB_CAP_DCBX_VER_CEE) ?
				    DCBSIM_ICE_DCBX_MODE_CEE : DCBSIM_ICE_DCBX_MODE_IEEE;
	netdev_info(dev, "DCBx mode = 0x%x\n", mode);
	return DCBSIM_ICE_DCB_HW_CHG_RST;
}

/* ice_dcbnl_get_cap(): 8 TCs (0x80) whatever maxtc; unknown ids read 0. */
static u8 dcbsim_ice_getcap(struct net_device *dev, int capid, u8 *cap)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	switch (capid) {
	case DCB_CAP_ATTR_PG:
	case DCB_CAP_ATTR_PFC:
		*cap = true;
		break;
	case DCB_CAP_ATTR_PG_TCS:
	case DCB_CAP_ATTR_PFC_TCS:
		*cap = 0x80;
		break;
	case DCB_CAP_ATTR_DCBX:
		*cap = priv->ice.dcbx_cap;
		break;
	default:
		*cap = false;
		break;
	}
	return 0;
}

/* ice has no maxrate and no buffer ops. */
static const struct dcbnl_rtnl_ops dcbsim_ice_dcbnl_ops = {
	.ieee_getets		= dcbsim_ice_getets,
	.ieee_setets		= dcbsim_ice_setets,
	.ieee_getpfc		= dcbsim_ice_getpfc,
	.ieee_setpfc		= dcbsim_ice_setpfc,
	.ieee_setapp		= dcbsim_ice_setapp,
	.ieee_delapp		= dcbsim_ice_delapp,
	.getdcbx		= dcbsim_ice_getdcbx,
	.setdcbx		= dcbsim_ice_setdcbx,
	.getcap			= dcbsim_ice_getcap,
};

/* ice_init_pf_dcb() with the FW LLDP agent off: VLAN mode, host IEEE DCBX,
 * ice_dcb_sw_dflt_cfg(ets_willing=true); "desired" starts empty.
 */
static void dcbsim_ice_init(struct net_device *dev)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	priv->ice.hw_pfc_mode = DCBSIM_ICE_QOS_MODE_VLAN;
	priv->ice.dcbx_cap = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
	dcbsim_ice_sw_dflt_cfg(dev, true);
}

static const struct dcbnl_rtnl_ops *dcbsim_dcbnl_ops[DCBSIM_NUM_PERSONALITIES] = {
	[DCBSIM_GENERIC] = &dcbsim_generic_dcbnl_ops,
	[DCBSIM_MLX5] = &dcbsim_mlx5_dcbnl_ops,
	[DCBSIM_ICE] = &dcbsim_ice_dcbnl_ops,
};

/* --- sysfs: /sys/class/net/dcbsimN/dcbsim/ ------------------------------------ */

static ssize_t personality_show(struct device *d, struct device_attribute *attr, char *buf)
{
	struct dcbsim_priv *priv = netdev_priv(to_net_dev(d));

	return sysfs_emit(buf, "%s\n", dcbsim_personality_names[priv->pers]);
}
static DEVICE_ATTR_RO(personality);

/* generic: the kernel APP table's DSCP entries, per priority */
static void dcbsim_generic_dscp_map(struct net_device *dev, struct dcb_ieee_app_prio_map *map)
{
	dcb_ieee_getapp_prio_dscp_mask_map(dev, map);
}

static enum dcbsim_trust dcbsim_trust(struct net_device *dev)
{
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcb_ieee_app_prio_map map;
	int i;

	switch (priv->pers) {
	case DCBSIM_MLX5:
		return priv->mlx5.trust;
	case DCBSIM_ICE:
		return priv->ice.hw_pfc_mode == DCBSIM_ICE_QOS_MODE_DSCP ?
		       DCBSIM_TRUST_DSCP : DCBSIM_TRUST_PCP;
	default:
		dcbsim_generic_dscp_map(dev, &map);
		for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
			if (map.map[i])
				return DCBSIM_TRUST_DSCP;
		return DCBSIM_TRUST_PCP;
	}
}

static ssize_t trust_show(struct device *d, struct device_attribute *attr, char *buf)
{
	struct net_device *dev = to_net_dev(d);
	enum dcbsim_trust trust;

	if (!rtnl_trylock())
		return restart_syscall();
	trust = dcbsim_trust(dev);
	rtnl_unlock();
	return sysfs_emit(buf, "%s\n", trust == DCBSIM_TRUST_DSCP ? "dscp" : "pcp");
}
static DEVICE_ATTR_RO(trust);

/* One line per DSCP: "DSCP PRIO".  mlx5: the firmware table, ice: the
 * driver's dscp_map (both for all 64, applied under DSCP trust); generic:
 * the DSCPs the APP table maps, with every priority it maps them to.
 */
static ssize_t dscp_prio_show(struct device *d, struct device_attribute *attr, char *buf)
{
	struct net_device *dev = to_net_dev(d);
	struct dcbsim_priv *priv = netdev_priv(dev);
	struct dcb_ieee_app_prio_map map = {};
	int len = 0;
	int dscp, p;

	if (!rtnl_trylock())
		return restart_syscall();
	if (priv->pers == DCBSIM_GENERIC)
		dcbsim_generic_dscp_map(dev, &map);
	for (dscp = 0; dscp < DCBSIM_NUM_DSCP; dscp++) {
		switch (priv->pers) {
		case DCBSIM_MLX5:
			len += sysfs_emit_at(buf, len, "%d %u\n", dscp, priv->mlx5.dscp2prio[dscp]);
			break;
		case DCBSIM_ICE:
			len += sysfs_emit_at(buf, len, "%d %u\n", dscp, priv->ice.local.dscp_map[dscp]);
			break;
		default: {
			bool any = false;

			for (p = 0; p < IEEE_8021QAZ_MAX_TCS; p++) {
				if (!(map.map[p] & BIT_ULL(dscp)))
					continue;
				if (!any)
					len += sysfs_emit_at(buf, len, "%d", dscp);
				len += sysfs_emit_at(buf, len, " %d", p);
				any = true;
			}
			if (any)
				len += sysfs_emit_at(buf, len, "\n");
			break;
		}
		}
	}
	rtnl_unlock();
	return len;
}
static DEVICE_ATTR_RO(dscp_prio);

static struct attribute *dcbsim_attrs[] = {
	&dev_attr_personality.attr,
	&dev_attr_trust.attr,
	&dev_attr_dscp_prio.attr,
	NULL,
};

static const struct attribute_group dcbsim_attr_group = {
	.name = "dcbsim",
	.attrs = dcbsim_attrs,
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

/* The driver name is the personality's (dcbsim, mlx5_core, ice), so that
 * tools which pick DCB rules by driver name see the driver being played;
 * bus-info and version say it is dcbsim.
 */
static const char * const dcbsim_driver_names[DCBSIM_NUM_PERSONALITIES] = {
	[DCBSIM_GENERIC] = KBUILD_MODNAME,
	[DCBSIM_MLX5] = "mlx5_core",
	[DCBSIM_ICE] = "ice",
};

static void dcbsim_get_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info)
{
	struct dcbsim_priv *priv = netdev_priv(dev);

	strscpy(info->driver, dcbsim_driver_names[priv->pers], sizeof(info->driver));
	strscpy(info->version, KBUILD_MODNAME, sizeof(info->version));
	strscpy(info->bus_info, KBUILD_MODNAME, sizeof(info->bus_info));
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
	dev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = DCBSIM_MAX_MTU;
	eth_hw_addr_random(dev);

	/* A freshly reset port: every priority on TC 0, strict priority,
	 * PFC off, global pause off, host-managed IEEE DCBX.  The mlx5 and
	 * ice personalities then apply their drivers' own defaults.
	 */
	memset(priv, 0, sizeof(*priv));
	priv->ets.ets_cap = num_tc;
	priv->pfc.pfc_cap = num_tc;
	priv->dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
	priv->buffer.total_size = DCBSIM_BUFFER_TOTAL;
	for (i = 0; i < DCBX_MAX_BUFFERS; i++)
		priv->buffer.buffer_size[i] = i ? 0 : DCBSIM_BUFFER_TOTAL;
}

/* The personality of device i: personality=NAME for all, or one per device. */
static int dcbsim_personality_of(unsigned int i)
{
	const char *name;
	int p;

	if (!num_personality)
		return DCBSIM_GENERIC;
	name = personality[num_personality == 1 ? 0 : i];
	for (p = 0; p < DCBSIM_NUM_PERSONALITIES; p++)
		if (sysfs_streq(name, dcbsim_personality_names[p]))
			return p;
	pr_err("personality '%s' unknown (generic, mlx5 or ice)\n", name);
	return -EINVAL;
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
	struct dcbsim_priv *priv;
	struct net_device *dev;
	unsigned int i;
	int pers;
	int err;

	if (!num_devs || num_devs > DCBSIM_MAX_DEVS) {
		pr_err("num_devs must be 1-%d\n", DCBSIM_MAX_DEVS);
		return -EINVAL;
	}
	if (!num_tc || num_tc > IEEE_8021QAZ_MAX_TCS) {
		pr_err("num_tc must be 1-%d\n", IEEE_8021QAZ_MAX_TCS);
		return -EINVAL;
	}
	if (num_personality > 1 && num_personality != num_devs) {
		pr_err("personality: give one value, or one per device (%u), not %u\n",
		       num_devs, num_personality);
		return -EINVAL;
	}
	for (i = 0; i < num_devs; i++)
		if (dcbsim_personality_of(i) < 0)
			return -EINVAL;

	for (i = 0; i < num_devs; i++) {
		dev = alloc_netdev(sizeof(struct dcbsim_priv), "dcbsim%d",
				   NET_NAME_ENUM, dcbsim_setup);
		if (!dev) {
			err = -ENOMEM;
			goto err_destroy;
		}
		pers = dcbsim_personality_of(i);
		priv = netdev_priv(dev);
		priv->pers = pers;
#ifdef CONFIG_DCB
		dev->dcbnl_ops = dcbsim_dcbnl_ops[pers];
#endif
		dev->sysfs_groups[0] = &dcbsim_attr_group;
		if (pers == DCBSIM_MLX5)
			dcbsim_mlx5_init(priv);
		else if (pers == DCBSIM_ICE)
			dcbsim_ice_init(dev);
		netif_carrier_off(dev);
		err = register_netdev(dev);
		if (err) {
			free_netdev(dev);
			goto err_destroy;
		}
		dcbsim_devs[i] = dev;
		netdev_info(dev, "personality %s\n", dcbsim_personality_names[pers]);
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
MODULE_DESCRIPTION("Simulated Ethernet netdevs with in-memory IEEE DCB state and the DCB rules of generic, mlx5 or ice (test device)");
MODULE_LICENSE("GPL");
