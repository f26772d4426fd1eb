/*
 * <vpmu-guest/perfmon.h> -- FreeBSD's perfmon(4) (<machine/perfmon.h>,
 * i386, FreeBSD 2.2 .. 10) for guests of libvpmu's paravirtual channel.
 *
 * The names and values are FreeBSD's; the device is reached through the
 * channel (vpmu_perfmon(4)): vpmu_perfmon_open() stands for
 * open("/dev/perfmon"), vpmu_dev_ioctl() for ioctl(2).  Freestanding: this
 * header needs <stdint.h> only.
 *
 * Two encodings of each ioctl are accepted.  FreeBSD built perfmon for
 * i386 only, where quad_t is 4-aligned: struct pmc_data and struct
 * pmc_tstamp are 12 bytes, PMIOREAD is 0xc00c3504 and PMIOTSTAMP
 * 0x400c3506 (the *_I386 names below, with the packed *_i386 structs).
 * A 64-bit guest's natural layouts are 16 bytes, PMIOREAD 0xc0103504 and
 * PMIOTSTAMP 0x40103506 (the plain names).  Every other ioctl is the
 * same in both.
 */
#ifndef VPMU_GUEST_PERFMON_H
#define VPMU_GUEST_PERFMON_H

#include <stdint.h>

#include <vpmu-guest/pv.h>

#include <vpmu-guest/dev.h>

#define NPMC		2	/* counters */
#define PMC_ALL		(-1)
#define _PATH_PERFMON	"/dev/perfmon"

/*
 * vpmu_pv_open.minor for vpmu_perfmon_open_cpu(): which processor's event
 * table PMIOSETUP uses.  FreeBSD's driver took the CPU's own class; a
 * virtual machine has none, so the opener says.
 */
#define VPMU_PERFMON_P6		0	/* Pentium Pro (also 6) */
#define VPMU_PERFMON_P5		5	/* Pentium */

struct pmc {
	int	pmc_num;		/* counter, 0 .. NPMC-1 */
	union {
		struct {
			unsigned char pmcus_event;
			unsigned char pmcus_unit;
			unsigned char pmcus_flags;
			unsigned char pmcus_mask;
		} pmcu_s;
		unsigned int pmcu_val;	/* event | unit << 8 | flags << 16 | mask << 24 */
	} pmc_pmcu;
};
#define pmc_event	pmc_pmcu.pmcu_s.pmcus_event
#define pmc_unit	pmc_pmcu.pmcu_s.pmcus_unit
#define pmc_flags	pmc_pmcu.pmcu_s.pmcus_flags
#define pmc_mask	pmc_pmcu.pmcu_s.pmcus_mask
#define pmc_val		pmc_pmcu.pmcu_val

/* A 64-bit guest's layouts (16 bytes each). */
struct pmc_data {
	int	pmcd_num;
	int64_t	pmcd_value;		/* quad_t */
};
struct pmc_tstamp {
	int	pmct_rate;		/* MHz, a hint */
	int64_t	pmct_value;
};

/* FreeBSD/i386's layouts (12 bytes each: quad_t 4-aligned). */
struct pmc_data_i386 {
	int	pmcd_num;
	int64_t	pmcd_value;
} __attribute__((packed, aligned(4)));
struct pmc_tstamp_i386 {
	int	pmct_rate;
	int64_t	pmct_value;
} __attribute__((packed, aligned(4)));

/* pmc_flags */
#define PMCF_USR	0x01	/* count events in user mode */
#define PMCF_OS		0x02	/* count events in kernel mode */
#define PMCF_E		0x04	/* P6: edge detect; P5: count events, not clocks */
#define PMCF_PC		0x08	/* pin control (no effect here) */
#define PMCF_INT	0x10	/* interrupt on overflow: do not use (stripped) */
#define PMCF_EN		0x40	/* enable: the driver's, stripped at PMIOSETUP */
#define PMCF_INV	0x80	/* invert the counter-mask comparison */
#define PMCF_SYS_FLAGS	(PMCF_INT | PMCF_EN)

#define PMIOSETUP	_VPMU_IOW('5', 1, 8)		/* struct pmc: 0x80083501 */
#define PMIOSTART	_VPMU_IOW('5', 2, 4)		/* int: 0x80043502 */
#define PMIOSTOP	_VPMU_IOW('5', 3, 4)		/* int: 0x80043503 */
#define PMIOREAD	_VPMU_IOWR('5', 4, 16)		/* struct pmc_data: 0xc0103504 */
#define PMIORESET	_VPMU_IOW('5', 5, 4)		/* int: 0x80043505 */
#define PMIOTSTAMP	_VPMU_IOR('5', 6, 16)		/* struct pmc_tstamp: 0x40103506 */
#define PMIOGET		_VPMU_IOWR('5', 7, 8)		/* struct pmc: 0xc0083507 */
#define PMIOREAD_I386	_VPMU_IOWR('5', 4, 12)		/* struct pmc_data_i386: 0xc00c3504 */
#define PMIOTSTAMP_I386	_VPMU_IOR('5', 6, 12)		/* struct pmc_tstamp_i386: 0x400c3506 */

/*
 * Pentium Pro events (FreeBSD's PMC6_* names).  vpmu_perfmon(4) says which
 * of them libvpmu counts: INST_RETIRED, BR_INST_RETIRED, CPU_CLK_UNHALTED;
 * PMIOSETUP refuses the others with EINVAL.
 */
#define PMC6_DATA_MEM_REFS		0x43
#define PMC6_DCU_LINES_IN		0x45
#define PMC6_DCU_M_LINES_IN		0x46
#define PMC6_DCU_M_LINES_OUT		0x47
#define PMC6_DCU_MISS_OUTSTANDING	0x48
#define PMC6_IFU_IFETCH			0x80
#define PMC6_IFU_IFETCH_MISS		0x81
#define PMC6_ITLB_MISS			0x85
#define PMC6_IFU_MEM_STALL		0x86
#define PMC6_ILD_STALL			0x87
#define PMC6_L2_IFETCH			0x28	/* MESI */
#define PMC6_L2_LD			0x29	/* MESI */
#define PMC6_L2_ST			0x2a	/* MESI */
#define PMC6_L2_LINES_IN		0x24
#define PMC6_L2_LINES_OUT		0x26
#define PMC6_L2_M_LINES_INM		0x25
#define PMC6_L2_M_LINES_OUTM		0x27
#define PMC6_L2_RQSTS			0x2e	/* MESI */
#define PMC6_L2_ADS			0x21
#define PMC6_L2_DBUS_BUSY		0x22
#define PMC6_L2_DBUS_BUSY_RD		0x23
#define PMC6_BUS_DRDY_CLOCKS		0x62
#define PMC6_BUS_LOCK_CLOCKS		0x63
#define PMC6_BUS_REQ_OUTSTANDING	0x60
#define PMC6_BUS_TRAN_BRD		0x65
#define PMC6_BUS_TRAN_RFO		0x66
#define PMC6_BUS_TRAN_WB		0x67
#define PMC6_BUS_TRAN_IFETCH		0x68
#define PMC6_BUS_TRAN_INVAL		0x69
#define PMC6_BUS_TRAN_PWR		0x6a
#define PMC6_BUS_TRAN_P		0x6b
#define PMC6_BUS_TRAN_IO		0x6c
#define PMC6_BUS_TRAN_DEF		0x6d
#define PMC6_BUS_TRAN_BURST		0x6e
#define PMC6_BUS_TRAN_ANY		0x70
#define PMC6_BUS_TRAN_MEM		0x6f
#define PMC6_BUS_DATA_RCV		0x64
#define PMC6_BUS_BNR_DRV		0x61
#define PMC6_BUS_HIT_DRV		0x7a
#define PMC6_BUS_HITM_DRV		0x7b
#define PMC6_BUS_SNOOP_STALL		0x7e
#define PMC6_FLOPS			0xc1	/* counter 0 only */
#define PMC6_FP_COMP_OPS_EXE		0x10	/* counter 0 only */
#define PMC6_FP_ASSIST			0x11	/* counter 1 only */
#define PMC6_MUL			0x12	/* counter 1 only */
#define PMC6_DIV			0x13	/* counter 1 only */
#define PMC6_CYCLES_DIV_BUSY		0x14	/* counter 0 only */
#define PMC6_LD_BLOCKS			0x03
#define PMC6_SB_DRAINS			0x04
#define PMC6_MISALIGN_MEM_REF		0x05
#define PMC6_INST_RETIRED		0xc0	/* counted: instructions */
#define PMC6_UOPS_RETIRED		0xc2
#define PMC6_INST_DECODER		0xd0
#define PMC6_HW_INT_RX			0xc8
#define PMC6_CYCLES_INT_MASKED		0xc6
#define PMC6_CYCLES_INT_PENDING_AND_MASKED 0xc7
#define PMC6_BR_INST_RETIRED		0xc4	/* counted: branches */
#define PMC6_BR_MISS_PRED_RETIRED	0xc5
#define PMC6_BR_TAKEN_RETIRED		0xc9
#define PMC6_BR_MISS_PRED_TAKEN_RET	0xca
#define PMC6_BR_INST_DECODED		0xe0
#define PMC6_BTB_MISSES			0xe2
#define PMC6_BR_BOGUS			0xe4
#define PMC6_BACLEARS			0xe6
#define PMC6_RESOURCE_STALLS		0xa2
#define PMC6_PARTIAL_RAT_STALLS		0xd2
#define PMC6_SEGMENT_REG_LOADS		0x06
#define PMC6_CPU_CLK_UNHALTED		0x79	/* counted: cycles */

/* Unit-mask bits of the MESI events (pmc_unit). */
#define PMCU6_M		0x08
#define PMCU6_E		0x04
#define PMCU6_S		0x02
#define PMCU6_I		0x01
#define PMCU6_MESI	0x0f

/*
 * Pentium events (FreeBSD's PMC5_* names; 16, 17, 32 and 33 do not
 * exist).  Counted, with PMCF_E: INST_EXECUTED, BRANCHES.
 */
#define PMC5_DATA_READ			0
#define PMC5_DATA_WRITE			1
#define PMC5_DATA_TLB_MISS		2
#define PMC5_DATA_READ_MISS		3
#define PMC5_DATA_WRITE_MISS		4
#define PMC5_WRITE_M_E			5
#define PMC5_DATA_LINES_WBACK		6
#define PMC5_DATA_CACHE_SNOOP		7
#define PMC5_DATA_CACHE_SNOOP_HIT	8
#define PMC5_MEM_ACCESS_BOTH		9
#define PMC5_BANK_CONFLICTS		10
#define PMC5_MISALIGNED_DATA		11
#define PMC5_INST_READ			12
#define PMC5_INST_TLB_MISS		13
#define PMC5_INST_CACHE_MISS		14
#define PMC5_SEGMENT_REG_LOAD		15
#define PMC5_BRANCHES			18	/* counted: branches */
#define PMC5_BTB_HITS			19
#define PMC5_BRANCH_TAKEN		20
#define PMC5_PIPELINE_FLUSH		21
#define PMC5_INST_EXECUTED		22	/* counted: instructions */
#define PMC5_INST_EXECUTED_V		23
#define PMC5_BUS_UTILIZATION		24
#define PMC5_WRITE_BACKUP_STALL		25
#define PMC5_DATA_READ_STALL		26
#define PMC5_WRITE_E_M_STALL		27
#define PMC5_LOCKED_BUS			28
#define PMC5_IO_CYCLE			29
#define PMC5_NONCACHE_MEMORY		30
#define PMC5_ADDR_GEN_INTERLOCK		31
#define PMC5_FLOPS			34
#define PMC5_BP0_MATCH			35
#define PMC5_BP1_MATCH			36
#define PMC5_BP2_MATCH			37
#define PMC5_BP3_MATCH			38
#define PMC5_HW_INTR			39
#define PMC5_DATA_RW			40
#define PMC5_DATA_RW_MISS		41

/* open("/dev/perfmon", fflags): the Pentium Pro table. */
int	vpmu_perfmon_open(int fflags);
/* The same with a table: VPMU_PERFMON_P6 (0 or 6) or VPMU_PERFMON_P5. */
int	vpmu_perfmon_open_cpu(int fflags, unsigned minor);

#endif /* VPMU_GUEST_PERFMON_H */
