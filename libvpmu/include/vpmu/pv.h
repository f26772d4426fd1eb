/*
 * <vpmu/pv.h> -- the paravirtual channel, host side: how a guest reaches
 * libvpmu through port I/O (vpmu_pv(4) is the guest's view, vpmu_pv(3)
 * this API).
 *
 * A VMM that uses <vpmu/kvm.h> gets the channel without calling anything
 * here: vpmu_kvm_add_memory() gives the channel the guest's RAM and
 * vpmu_kvm_handle_exit() takes the port exits.  A VMM with its own run loop
 * calls vpmu_pv_add_memory() for each RAM slot and vpmu_pv_port_io() for
 * every port access to the channel's eight ports (vpmu_vm_get_pv_port():
 * VPMU_PV_PORT_BASE .. + 7 unless configured otherwise).
 *
 * Every function returns 0 or a positive errno (vpmu(3)'s rule).
 */
#ifndef VPMU_PV_H
#define VPMU_PV_H

#include <stdbool.h>
#include <stdint.h>

#include <vpmu/export.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vpmu_vm;
struct vpmu_config;

/*
 * The ports: the default base (the same values as <vpmu-guest/pv.h>), and
 * the channel's eight ports base .. base + 7 (doorbell at base + 0, high
 * address word at base + VPMU_PV_PORT_HI_OFFSET).
 */
#define VPMU_PV_PORT_BASE	0x5650u
#define VPMU_PV_PORT_COUNT	8u
#define VPMU_PV_PORT_HI_OFFSET	4u

/*
 * The channel's first port for VMs created from cfg (default
 * VPMU_PV_PORT_BASE); 0 switches the channel off (vpmu_pv_port_io() then
 * claims no port).  EINVAL for a range that passes 0xFFFF, that lies in
 * 0x0000 .. 0x00FF, or that overlaps 0x0CF8 .. 0x0CFF.
 */
VPMU_EXTERN int vpmu_config_set_pv_port(struct vpmu_config *cfg, uint16_t base);

/* The VM's first channel port, 0 when the channel is off: the ports to route. */
VPMU_EXTERN int vpmu_vm_get_pv_port(const struct vpmu_vm *vm, uint16_t *base);

/*
 * Guest RAM the channel may read and write: size bytes at guest-physical
 * gpa, at hva in this process.  Before the vCPUs run.  EINVAL for an
 * overlap or a wrapping range, ENOSPC past 32 slots.
 */
VPMU_EXTERN int vpmu_pv_add_memory(struct vpmu_vm *vm, uint64_t gpa, uint64_t size, void *hva);

/*
 * A port access by vCPU cpu: port in the VM's base .. base + 7, size 1, 2 or
 * 4 bytes, out (the guest wrote *data) or in (*data receives what the
 * guest reads).  *handled is false for a port that is not the channel's
 * (every port when the channel is off).
 * A request's own failures go back to the guest; the function fails only
 * for bad arguments (EINVAL).
 */
VPMU_EXTERN int vpmu_pv_port_io(struct vpmu_vm *vm, unsigned cpu, uint16_t port, bool out,
    unsigned size, uint32_t *data, bool *handled);

/*
 * Offer the guest a log file: a guest CONFIGURELOG naming descriptor
 * guest_fd writes to host_fd (libvpmu duplicates it at CONFIGURELOG time;
 * the caller keeps its own).  host_fd -1 withdraws the offer.  guest_fd
 * 0 .. VPMU_PV_MAX_LOGFDS-1.
 */
#define VPMU_PV_MAX_LOGFDS	16
VPMU_EXTERN int vpmu_pv_set_logfd(struct vpmu_vm *vm, int guest_fd, int host_fd);

/*
 * The fast-read pages: besides every exit of the vCPU a process runs on,
 * a host thread refreshes every page hz times a second (default 1000;
 * 0 stops the thread; at most 1000000).
 */
VPMU_EXTERN int vpmu_pv_set_fastpage_rate(struct vpmu_vm *vm, unsigned hz);

struct vpmu_pv_stats {
	uint64_t requests;		/* doorbells that named a block */
	uint64_t errors;		/* ...that returned an error */
	uint64_t unreachable;		/* ...whose block could not be read or written (EFAULT) */
	uint64_t ignored;		/* accesses of a size or direction the channel ignores */
	uint64_t fastpage_updates;	/* pages written (exits and the thread) */
};
VPMU_EXTERN int vpmu_pv_get_stats(struct vpmu_vm *vm, struct vpmu_pv_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_PV_H */
