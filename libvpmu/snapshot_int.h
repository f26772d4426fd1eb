/*
 * snapshot.h -- what the snapshot files share (vpmu_snapshot(3)): the blob's
 * layout, its codec (snapshot_codec.c) and its decoded form, which
 * snapshot_parse.c fills and snapshot.c applies; snapshot_save.c writes it.
 *
 * Layout (every integer little-endian, of the width named; strings are a
 * u32 length, 0xFFFFFFFF for none, then the bytes; "cred" is pid i32,
 * tid i32, uid u32, privileged u8, jailed u8; "spec" is event u32,
 * flags u32, cmask u32, raw u64; "counts" is base, counted, t_enabled,
 * t_running, tot_enabled, tot_running, shown u64 and group u32):
 *
 *   header   magic "VPMUSNAP", version u32, flags u32 (0), payload
 *            length u64, CRC-32 (IEEE) of the payload u32, reserved u32 (0)
 *   CONF     model: name 16 bytes, vendor, version, gp, fixed, width,
 *            fixed_width, fw_writes, ebx, core_ext u32; nvcpus, npmc,
 *            nclass u32 and per class cls, rows, width u32; capacity u32;
 *            the source's name (string)
 *   VMST     mincount, unprivileged_syspmcs, unprivileged_proc_debug i64;
 *            the eight driver statistics u32; forks u64; next_group u32
 *   VCPU     per vCPU: online u8, has_cur u8, cur pid i32, cur tid i32,
 *            npmc disabled flags u8
 *   GPMU     per vCPU: fixed_ctrl, global_ctrl, global_status u64,
 *            pmi_pending u8; per counter (gp, then fixed): control u64,
 *            last u64, shown spec, used u8, its PMC's spec, counts
 *   PROC     count u32; per process: cred, ppid i32, exiting u8, path
 *   OWNR     count u32; per owner: cred, has_log u8, log descriptor i32,
 *            forked u64, PMC count u32; per PMC: id, mode, cls, cpu, row,
 *            caps, flags, state u32, spec, counts, reload, sample_mark u64,
 *            dropped u8, nhw u32 and per hw loaded u64, target count u32
 *            and per target pid i32, value u64
 *   XACT     has_points u8 (the source has exec_point_get, as the exact
 *            source has); then per vCPU: known u8, rip, rsp, rbp, rcx,
 *            rflags, cr0, cr3, cr4, efer u64, cpl u8, long_mode u8,
 *            idt_base u64, idt_limit u16
 *
 * Each section starts with its 4-byte tag.  Counts are saved as the guest
 * would read them at the moment of the save (what host slots hold
 * included) and restored as "counted": the guest reads the same value
 * after the restore and counting goes on from there.  The guest counters
 * (model PMCs) are not in OWNR: GPMU carries them and the restore
 * reprograms them through the model, as the guest's MSR writes would.
 *
 * Restore parses and checks the whole blob into a decoded copy before it
 * touches the VM; only then is anything applied.
 */
#ifndef VPMU_SNAPSHOT_INT_H
#define VPMU_SNAPSHOT_INT_H

#include "internal.h"
#include "gpmu.h"
#include <vpmu/snapshot.h>

#define MAGIC		"VPMUSNAP"
#define HDR_LEN		32
#define NO_STRING	0xFFFFFFFFu
#define PATH_MAX_LEN	4096u
#define NCTR		(GPMU_MAX_GP + GPMU_MAX_FIXED)

#define TAG(a, b, c, d)	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | \
			 (uint32_t)(d) << 24)
#define T_CONF		TAG('C', 'O', 'N', 'F')
#define T_VMST		TAG('V', 'M', 'S', 'T')
#define T_VCPU		TAG('V', 'C', 'P', 'U')
#define T_GPMU		TAG('G', 'P', 'M', 'U')
#define T_PROC		TAG('P', 'R', 'O', 'C')
#define T_OWNR		TAG('O', 'W', 'N', 'R')
#define T_XACT		TAG('X', 'A', 'C', 'T')

/* Internal flags a saved PMC may carry. */
#define PF_SAVED	(VPMU_F_ALLOCATE_MASK | VPMU_PF_ATTACHED_TO_OWNER | \
			 VPMU_PF_NEEDS_LOGFILE | VPMU_PF_ATTACH_DONE | VPMU_PF_MSR_ACCESS)

/* ---- the codec (snapshot_codec.c) ------------------------------------------------ */

/* With b NULL (or past cap) it only measures. */
struct wr {
	uint8_t *b;
	size_t cap;
	size_t off;
};

/* A reader past the end, or of a bad value, sets bad and reads zeros. */
struct rd {
	const uint8_t *b;
	size_t len, off;
	bool bad;
};

void	vpmu__w_u8(struct wr *w, uint8_t v);
void	vpmu__w_u16(struct wr *w, uint16_t v);
void	vpmu__w_u32(struct wr *w, uint32_t v);
void	vpmu__w_u64(struct wr *w, uint64_t v);
void	vpmu__w_bytes(struct wr *w, const void *p, size_t n);
void	vpmu__w_str(struct wr *w, const char *s);
void	vpmu__w_cred(struct wr *w, const struct vpmu_cred *c);
void	vpmu__w_spec(struct wr *w, const struct vpmu_event_spec *s);
uint8_t	vpmu__r_u8(struct rd *r);
uint16_t	vpmu__r_u16(struct rd *r);
uint32_t	vpmu__r_u32(struct rd *r);
uint64_t	vpmu__r_u64(struct rd *r);
bool	vpmu__r_bool(struct rd *r);
uint32_t	vpmu__r_count(struct rd *r, size_t min);
char *vpmu__r_str(struct rd *r, bool *nomem);
void	vpmu__r_cred(struct rd *r, struct vpmu_cred *c);
void	vpmu__r_spec(struct rd *r, struct vpmu_event_spec *s);
void	vpmu__r_tag(struct rd *r, uint32_t tag);

/* The read-write tunables VMST holds, in order. */
extern const enum vpmu_tunable_id vpmu__snap_rw_tunables[3];

/* A guest counter's PMC (the model's): GPMU holds it, not OWNR. */
static inline bool
vpmu__snap_model_pmc(const struct vpmu_pmc *pm)
{
	return (pm->wrap_mask != 0);
}

/* ---- the decoded blob ---------------------------------------------------------- */

struct s_counts {
	uint64_t base, counted, t_enabled, t_running, tot_enabled, tot_running, shown;
	uint32_t group;
};

struct s_ctr {
	uint64_t ctl, last;
	struct vpmu_event_spec shown;
	bool used;
	struct vpmu_event_spec spec;	/* its PMC's event (GETPMCINFO shows it) */
	struct s_counts n;
};

struct s_gvcpu {
	uint64_t fixed_ctrl, global_ctrl, global_status;
	bool pmi;
	struct s_ctr c[NCTR];
};

struct s_vcpu {
	bool online, has_cur;
	int32_t cur_pid, cur_tid;
	uint8_t *disabled;		/* npmc */
	bool known;
	struct vpmu_regs p;
};

struct s_target {
	int32_t pid;
	uint64_t value;
};

struct s_pmc {
	uint32_t id, mode, cls, cpu, row, caps, flags, state;
	struct vpmu_event_spec spec;
	struct s_counts n;
	uint64_t reload, sample_mark;
	bool dropped;
	uint32_t nhw;
	uint64_t *loaded;
	uint32_t nt;
	struct s_target *t;
};

struct s_owner {
	struct vpmu_cred cred;
	bool has_log;
	int32_t logdesc;
	uint64_t forked;
	uint32_t npmc;
	struct s_pmc *pmcs;
};

struct s_proc {
	struct vpmu_cred cred;
	int32_t ppid;
	bool exiting;
	char *path;
};

struct snap {
	long tun[3];
	struct vpmu_driverstats stats;
	uint64_t forks;
	uint32_t next_group;
	struct s_vcpu *vcpu;
	struct s_gvcpu *g;
	uint32_t nproc;
	struct s_proc *procs;
	uint32_t nowner;
	struct s_owner *owners;
	bool has_points;
};

/* snapshot_parse.c: the blob decoded into s, no lock held (its CRC, its
 * layout, the VM's configuration: what vpmu_vm_create() fixed); then,
 * VM lock held, checked against the VM (fresh, and consistent). */
int	vpmu__snap_decode(const uint8_t *b, size_t len, const struct vpmu_vm *vm,
	    struct snap *s);
int	vpmu__snap_check(const struct vpmu_vm *vm, const struct snap *s);
void	vpmu__snap_free(struct snap *s, unsigned nvcpus);

/* snapshot.c: the snapshot section of the VM's layers (log descriptors). */
void	vpmu__snap_hold(struct vpmu_vm *vm);
void	vpmu__snap_release(struct vpmu_vm *vm);
int	vpmu__snap_log_fd(struct vpmu_vm *vm, int32_t n);
bool	vpmu__snap_owner_unsaved(const struct vpmu_vm *vm, int32_t pid);

#endif /* VPMU_SNAPSHOT_INT_H */
