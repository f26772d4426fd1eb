/* kvm.c -- TEMPORARY stubs of <vpmu/kvm.h> while the glue is written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kvm.h>

#include "internal.h"
#include <vpmu/kvm.h>
#include <vpmu/model.h>

struct vpmu_kvm { struct vpmu_vm *vm; };

int vpmu_kvm_create(struct vpmu_vm *vm, int vm_fd, vpmu_kvm **kp)
{ (void)vm_fd; if (vm == NULL || kp == NULL) return (EINVAL); *kp = calloc(1, sizeof(**kp)); if (*kp == NULL) return (ENOMEM); (*kp)->vm = vm; return (0); }
void vpmu_kvm_destroy(vpmu_kvm *k) { free(k); }
int vpmu_kvm_add_memory(vpmu_kvm *k, uint64_t gpa, uint64_t size, void *hva) { (void)k; (void)gpa; (void)size; (void)hva; return (0); }
int vpmu_kvm_cpuid_patch(vpmu_kvm *k, struct kvm_cpuid2 *c, unsigned m) { (void)k; (void)c; (void)m; return (0); }
int vpmu_kvm_vcpu_init(vpmu_kvm *k, unsigned cpu, int fd, struct kvm_run *run) { (void)k; (void)cpu; (void)fd; (void)run; return (0); }
int vpmu_kvm_pre_run(vpmu_kvm *k, unsigned cpu) { (void)k; (void)cpu; return (0); }
int vpmu_kvm_post_run(vpmu_kvm *k, unsigned cpu) { (void)k; (void)cpu; return (0); }
int vpmu_kvm_handle_exit(vpmu_kvm *k, unsigned cpu, bool *handled) { (void)k; (void)cpu; *handled = false; return (0); }
int vpmu_kvm_get_stats(vpmu_kvm *k, unsigned cpu, struct vpmu_kvm_stats *st) { (void)k; (void)cpu; memset(st, 0, sizeof(*st)); return (0); }
