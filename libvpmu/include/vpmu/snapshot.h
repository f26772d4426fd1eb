/*
 * <vpmu/snapshot.h> -- save a VM's virtual PMU to a blob and restore it
 * into a fresh VM; see vpmu_snapshot(3).
 *
 * The blob is versioned and byte-order fixed: little-endian integers of
 * explicit widths, never a struct image, so it moves between builds and
 * hosts.  It holds everything a guest can see of its PMU: the model, each
 * guest counter (control, value, enabled/running time, overflow status,
 * global and fixed control, a pending PMI), and the hwpmc state (row
 * dispositions, PMCs with their ids, owners, targets, modes, flags and
 * events, the process table, each owner's log by descriptor number), plus
 * the exact source's last retirement point per vCPU.
 *
 * Errors (0 or a positive errno, as everywhere in libvpmu):
 *   EINVAL           a NULL argument; restore: the VM's configuration
 *                    (model, vCPUs, classes, source, capacity) differs
 *   ENOSPC           save: buf is NULL or *len too small; *len says how
 *                    many bytes it takes
 *   EPROTONOSUPPORT  restore: a blob of another format version
 *   EBADMSG          restore: not a snapshot, truncated, corrupted (CRC)
 *                    or inconsistent
 *   EBUSY            restore: the VM is not fresh (it has PMCs other than
 *                    its guest counters, processes, logs or disabled rows)
 *   EBADF            restore: an owner's log descriptor number was not
 *                    offered with vpmu_pv_set_logfd(), or is not writable
 *   EBUSY            save: the guest's perfmon or pctr device holds PMCs
 *                    (their devices' state is not saved)
 * On any of these the VM is unchanged.  A failure of the host while
 * applying (ENOMEM, EAGAIN) leaves it good only for vpmu_vm_destroy().
 */
#ifndef VPMU_SNAPSHOT_H
#define VPMU_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include <vpmu/export.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vpmu_vm;

/* The blob format version vpmu_vm_save() writes and vpmu_vm_restore() reads. */
#define VPMU_SNAPSHOT_VERSION	1

/*
 * Save vm into buf (*len bytes); *len becomes the blob's size.  buf NULL or
 * *len too small: ENOSPC, *len the size needed.  Call it with the vCPUs
 * stopped (between two exits): the exact source's retirement point must
 * match the registers the VMM saves.
 */
VPMU_EXTERN int vpmu_vm_save(struct vpmu_vm *vm, void *buf, size_t *len);
/*
 * Restore a blob of len bytes into vm, freshly created with the same
 * configuration; the VMM first offers the same log descriptors
 * (vpmu_pv_set_logfd()), and must not call vpmu_kvm_vcpu_resync() for the
 * restored registers: the exact source goes on from the saved point.
 */
VPMU_EXTERN int vpmu_vm_restore(struct vpmu_vm *vm, const void *buf, size_t len);
/*
 * CRC-32 (IEEE 802.3, reflected; zlib's crc32()) of n bytes at buf,
 * continuing crc: 0 to start, then each result with the next piece.  The
 * blob's header holds this CRC of its payload; a VMM can check the files
 * it keeps a blob in with it, as vpmu-run does.  Thread-safe.
 */
VPMU_EXTERN uint32_t vpmu_crc32(uint32_t crc, const void *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_SNAPSHOT_H */
