/*
 * test_hwpmc_errors.c -- one test per applicable line of hwpmc(4)'s ERRORS
 * section, named <operation>_<condition>_<errno>.
 *
 * Lines that do not apply to libvpmu, and why:
 *   EAGAIN (helper process for CONFIGURELOG): libvpmu starts a writer thread,
 *     not a process; a thread that cannot start gives EAGAIN.
 *   EINVAL (Pentium 4 HTT process PMCs), EOPNOTSUPP (i386 without APIC):
 *     no such hardware is modelled.
 * The log lines (CONFIGURELOG EBUSY, EINVAL for a log-less WRITELOG...)
 * that need a configured log are tested with the log; the ones that hold
 * without a log are here.
 */
#include "fixture.h"

/* ---- EBUSY ---------------------------------------------------------------- */

static void
pmcadmin_disable_thread_row_EBUSY(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 1, VPMU_ID_TO_ROW(id),
	    VPMU_ADMIN_DISABLE), EBUSY);
}

static void
pmcadmin_active_system_pmc_EBUSY(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = SC_PV(f, &ROOT, 0, VPMU_EV_INSTRUCTIONS);

	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 0, VPMU_ID_TO_ROW(id),
	    VPMU_ADMIN_DISABLE), EBUSY);
	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 0, VPMU_ID_TO_ROW(id),
	    VPMU_ADMIN_ENABLE), EBUSY);
	/* The same row on the other vCPU holds no PMC. */
	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 1, VPMU_ID_TO_ROW(id),
	    VPMU_ADMIN_DISABLE), 0);
}

static void
pmcattach_row_in_use_EBUSY(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id a = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	vpmu_pmc_id b = TC_PV(f, &ROOT, VPMU_EV_BRANCHES, 0);

	/* Both owners got the first PV row: process PMCs share rows. */
	assert_int_equal(VPMU_ID_TO_ROW(a), ROW_PV0);
	assert_int_equal(VPMU_ID_TO_ROW(b), ROW_PV0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, a, USER.pid), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &ROOT, b, USER.pid), EBUSY);
}

static void
pmcrw_newvalue_running_EBUSY(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = SC_PV(f, &ROOT, 0, VPMU_EV_INSTRUCTIONS);

	assert_int_equal(vpmu_pmc_start(f->vm, &ROOT, id), 0);
	assert_int_equal(vpmu_pmc_write(f->vm, &ROOT, id, 5), EBUSY);
}

static void
pmcsetcount_running_EBUSY(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id), 0);
	assert_int_equal(vpmu_pmc_setcount(f->vm, &USER, id, 5), EBUSY);
}

/* ---- EDOOFUS --------------------------------------------------------------- */

static void
pmcstart_log_modifiers_without_log_EDOOFUS(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id a = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, VPMU_F_LOG_PROCCSW);
	vpmu_pmc_id b = fx_alloc(f, &USER, VPMU_MODE_TC, VPMU_CPU_ANY,
	    VPMU_CLASS_IAP, VPMU_EV_INSTRUCTIONS, VPMU_F_LOG_PROCEXIT);

	assert_int_equal(vpmu_pmc_start(f->vm, &USER, a), VPMU_EDOOFUS);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, b), VPMU_EDOOFUS);
}

static void
pmcstart_system_sampling_without_log_EDOOFUS(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = fx_alloc(f, &ROOT, VPMU_MODE_SS, 1, VPMU_CLASS_PV,
	    VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_start(f->vm, &ROOT, id), VPMU_EDOOFUS);
}

/* ---- EEXIST ----------------------------------------------------------------- */

static void
pmcattach_same_target_again_EEXIST(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), EEXIST);
}

/* ---- EFAULT ----------------------------------------------------------------- */

static void
op_bad_address_EFAULT(void **state)
{
	struct fx *f = *state;
	struct vpmu_cpuinfo ci;
	uint32_t n = 0;

	assert_int_equal(vpmu_vm_op(f->vm, &ROOT, VPMU_OP_PMCALLOCATE, NULL), EFAULT);
	assert_int_equal(vpmu_vm_op(f->vm, NULL, VPMU_OP_GETCPUINFO, &ci), EFAULT);
	assert_int_equal(vpmu_pmc_read(f->vm, &ROOT, 0, NULL), EFAULT);
	n = NPMC;
	assert_int_equal(vpmu_vm_get_pmcinfo(f->vm, &ROOT, 0, NULL, &n), EFAULT);
}

/* ---- EINVAL ----------------------------------------------------------------- */

static void
pmc_invalid_handle_EINVAL(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	/* A row past the last one, and a well-formed id the caller does not own. */
	assert_int_equal(vpmu_pmc_start(f->vm, &USER,
	    VPMU_ID_MAKE(0xFFF, VPMU_MODE_TC, VPMU_CLASS_PV, NPMC)), EINVAL);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id + 1), EINVAL);
	assert_int_equal(vpmu_pmc_release(f->vm, &USER, id ^ 0x10000), EINVAL);
}

static void
getpmcinfo_bad_cpu_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_info pi[NPMC];
	uint32_t n = NPMC;

	assert_int_equal(vpmu_vm_get_pmcinfo(f->vm, &USER, 2, pi, &n), EINVAL);
}

static void
configurelog_unknown_flags_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_op_configurelog cl = { .flags = 1, .logfd = 1 };

	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_CONFIGURELOG, &cl), EINVAL);
}

static void
configurelog_deconfigure_without_log_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_op_configurelog cl = { .flags = 0, .logfd = -1 };

	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_CONFIGURELOG, &cl), EINVAL);
}

static void
flushlog_without_log_EINVAL(void **state)
{
	struct fx *f = *state;

	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_FLUSHLOG, NULL), EINVAL);
}

static void
writelog_without_log_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_op_writelog wl = { 42 };

	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_WRITELOG, &wl), EINVAL);
}

static void
pmcadmin_bad_cpu_EINVAL(void **state)
{
	struct fx *f = *state;

	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 2, 0, VPMU_ADMIN_DISABLE), EINVAL);
	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, -1, 0, VPMU_ADMIN_DISABLE), EINVAL);
}

static void
pmcadmin_bad_request_EINVAL(void **state)
{
	struct fx *f = *state;

	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 0, 0, VPMU_STATE_RUNNING), EINVAL);
}

static void
pmcadmin_bad_pmc_EINVAL(void **state)
{
	struct fx *f = *state;

	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 0, NPMC, VPMU_ADMIN_DISABLE), EINVAL);
	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 0, -1, VPMU_ADMIN_DISABLE), EINVAL);
}

static void
pmcallocate_no_suitable_pmc_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_IAF,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };

	/* IAF-0 is the one fixed row counting instructions: the second fails. */
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), 0);
	assert_int_equal(VPMU_ID_TO_ROW(a.pmcid), ROW_IAF0);
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EINVAL);
	assert_int_equal(a.pmcid, VPMU_ID_INVALID);
	/* No fixed row counts branches. */
	a.event = VPMU_EV_BRANCHES;
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EINVAL);
	/* An unknown class or event. */
	a.cls = 0x33;
	a.event = VPMU_EV_INSTRUCTIONS;
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EINVAL);
	a.cls = VPMU_CLASS_PV;
	a.event = 0x77;
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EINVAL);
}

static void
pmcallocate_invalid_mode_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = 4 };

	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), EINVAL);
}

static void
pmcallocate_invalid_cpu_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = 2, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };

	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EINVAL);
}

static void
pmcallocate_process_pmc_on_a_cpu_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_TC };

	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), EINVAL);
}

static void
pmcallocate_system_pmc_on_any_cpu_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };

	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EINVAL);
}

static void
pmcallocate_unknown_flags_EINVAL(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_TC };

	a.flags = 0x1000;
	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), EINVAL);
	a.flags = VPMU_F_NEWVALUE;		/* a PMCRW flag, not a modifier */
	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), EINVAL);
	a.flags = VPMU_F_USERCALLCHAIN;		/* needs CALLCHAIN and sampling */
	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), EINVAL);
	a.mode = VPMU_MODE_SC;			/* process-only modifier */
	a.cpu = 0;
	a.flags = VPMU_F_DESCENDANTS;
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EINVAL);
}

static void
pmcattach_system_pmc_EINVAL(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = SC_PV(f, &ROOT, 0, VPMU_EV_INSTRUCTIONS);

	assert_int_equal(vpmu_pmc_attach(f->vm, &ROOT, id, USER.pid), EINVAL);
	assert_int_equal(vpmu_pmc_detach(f->vm, &ROOT, id, USER.pid), EINVAL);
}

static void
pmcattach_illegal_pid_EINVAL(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, -5), EINVAL);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, -5), EINVAL);
}

static void
pmcdetach_not_attached_to_target_EINVAL(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id a = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	vpmu_pmc_id b = TC_PV(f, &USER, VPMU_EV_BRANCHES, 0);

	/* The child is monitored (by a), but not by b. */
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, a, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, b, USER_CHILD.pid), EINVAL);
}

static void
pmcrw_illegal_flags_EINVAL(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = SC_PV(f, &ROOT, 0, VPMU_EV_INSTRUCTIONS);
	uint64_t v = 0;

	assert_int_equal(vpmu_pmc_rw(f->vm, &ROOT, id, 0, &v), EINVAL);
	assert_int_equal(vpmu_pmc_rw(f->vm, &ROOT, id, VPMU_F_OLDVALUE | 1, &v), EINVAL);
	assert_int_equal(vpmu_pmc_rw(f->vm, &ROOT, id, VPMU_F_DESCENDANTS, &v), EINVAL);
}

static void
pmcgetmsr_not_process_mode_EINVAL(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = fx_alloc(f, &ROOT, VPMU_MODE_SC, 0, VPMU_CLASS_IAP,
	    VPMU_EV_INSTRUCTIONS, 0);
	uint32_t msr;

	assert_int_equal(vpmu_pmc_getmsr(f->vm, &ROOT, id, &msr), EINVAL);
}

static void
pmcgetmsr_not_solely_on_owner_EINVAL(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = fx_alloc(f, &USER, VPMU_MODE_TC, VPMU_CPU_ANY,
	    VPMU_CLASS_IAP, VPMU_EV_INSTRUCTIONS, 0);
	uint32_t msr;

	/* Not attached at all, then attached to the owner and its child. */
	assert_int_equal(vpmu_pmc_getmsr(f->vm, &USER, id, &msr), EINVAL);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, 0), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_getmsr(f->vm, &USER, id, &msr), EINVAL);
	/* Only on its owner: the RDPMC index of IAP-0. */
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_getmsr(f->vm, &USER, id, &msr), 0);
	assert_int_equal(msr, 0);
}

static void
pmcgetmsr_descendants_EINVAL(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = fx_alloc(f, &USER, VPMU_MODE_TC, VPMU_CPU_ANY,
	    VPMU_CLASS_IAP, VPMU_EV_INSTRUCTIONS, VPMU_F_DESCENDANTS);
	uint32_t msr;

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, 0), 0);
	assert_int_equal(vpmu_pmc_getmsr(f->vm, &USER, id, &msr), EINVAL);
}

/* ---- ENOSYS ----------------------------------------------------------------- */

static void
pmcgetmsr_class_without_rdpmc_ENOSYS(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	uint32_t msr = 0;

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, 0), 0);
	assert_int_equal(vpmu_pmc_getmsr(f->vm, &USER, id, &msr), ENOSYS);
}

/* ---- ENXIO ------------------------------------------------------------------ */

static void
getpmcinfo_disabled_cpu_ENXIO(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_info pi[NPMC];
	uint32_t n = NPMC;

	assert_int_equal(vpmu_vcpu_set_online(f->vm, 1, 0), 0);
	assert_int_equal(vpmu_vm_get_pmcinfo(f->vm, &USER, 1, pi, &n), ENXIO);
}

static void
pmcallocate_system_pmc_on_disabled_cpu_ENXIO(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = 1, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };

	assert_int_equal(vpmu_vcpu_set_online(f->vm, 1, 0), 0);
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), ENXIO);
}

static void
pmcstart_pmcstop_system_pmc_on_disabled_cpu_ENXIO(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id a = SC_PV(f, &ROOT, 1, VPMU_EV_INSTRUCTIONS);
	vpmu_pmc_id b = SC_PV(f, &ROOT, 1, VPMU_EV_BRANCHES);

	assert_int_equal(vpmu_pmc_start(f->vm, &ROOT, b), 0);
	assert_int_equal(vpmu_vcpu_set_online(f->vm, 1, 0), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &ROOT, a), ENXIO);
	assert_int_equal(vpmu_pmc_stop(f->vm, &ROOT, b), ENXIO);
}

/* ---- EOPNOTSUPP -------------------------------------------------------------- */

static void
pmcallocate_caps_not_in_class_EOPNOTSUPP(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_IAF,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC,
	    .caps = VPMU_CAP_EDGE };

	/* Fixed counters have no edge detection. */
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EOPNOTSUPP);
	a.cls = VPMU_CLASS_PV;
	a.caps = VPMU_CAP_PRECISE;
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), EOPNOTSUPP);
}

/* ---- EPERM ------------------------------------------------------------------ */

static void
pmcadmin_unprivileged_or_jailed_EPERM(void **state)
{
	struct fx *f = *state;

	assert_int_equal(vpmu_pmc_admin(f->vm, &USER, 0, 0, VPMU_ADMIN_DISABLE), EPERM);
	assert_int_equal(vpmu_pmc_admin(f->vm, &JAILROOT, 0, 0, VPMU_ADMIN_DISABLE), EPERM);
}

static void
pmcattach_no_permission_EPERM(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	/* Another uid; a set-id process of the same uid; root. */
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, OTHER.pid), EPERM);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, SETID.pid), EPERM);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, ROOT.pid), EPERM);
	/* The same uid is fine... */
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, USER_CHILD.pid), 0);
	/* ...until unprivileged_proc_debug is 0; attaching to itself still is. */
	assert_int_equal(vpmu_vm_set_tunable(f->vm, "security.bsd.unprivileged_proc_debug", 0), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), EPERM);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER.pid), 0);
}

static void
pmcattach_jailed_caller_EPERM(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &JAILROOT, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_attach(f->vm, &JAILROOT, id, USER.pid), EPERM);
}

static void
pmcattach_after_getmsr_EPERM(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = fx_alloc(f, &USER, VPMU_MODE_TC, VPMU_CPU_ANY,
	    VPMU_CLASS_IAF, VPMU_EV_CYCLES, 0);
	uint32_t msr;

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, 0), 0);
	assert_int_equal(vpmu_pmc_getmsr(f->vm, &USER, id, &msr), 0);
	assert_int_equal(msr, 0x40000001u);		/* IAF-1: fixed counter 1 */
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), EPERM);
}

static void
pmcallocate_system_pmc_unprivileged_EPERM(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };

	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), EPERM);
	assert_int_equal(vpmu_pmc_allocate(f->vm, &JAILROOT, &a), EPERM);
	/* security.bsd.unprivileged_syspmcs lets ordinary users, not jails. */
	assert_int_equal(vpmu_vm_set_tunable(f->vm, "unprivileged_syspmcs", 1), 0);
	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), 0);
	assert_int_equal(vpmu_pmc_allocate(f->vm, &JAILROOT, &a), EPERM);
}

/* ---- ESRCH ------------------------------------------------------------------ */

static void
op_caller_without_pmcs_ESRCH(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_start(f->vm, &OTHER, id), ESRCH);
	assert_int_equal(vpmu_pmc_release(f->vm, &OTHER, id), ESRCH);
}

static void
pmcstart_after_all_targets_gone_ESRCH(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_proc_exit(f->vm, USER_CHILD.pid), 0);
	assert_int_equal(f->sigio, 1);			/* its last target left */
	assert_int_equal(f->last_sig_pid, USER.pid);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id), ESRCH);
}

/*
 * hwpmc's "detached from all of its target processes": a PMC that ever had
 * a target (PMCATTACH, or PMCSTART's attachment to its owner) and has none
 * left is not attached to its owner again by PMCSTART, however the targets
 * went (pmc_start() tests PMC_F_ATTACH_DONE, not the target list).
 */
static void
pmcstart_after_last_target_detached_ESRCH(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, USER_CHILD.pid), 0);
	assert_int_equal(f->sigio, 1);			/* its last target left */
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id), ESRCH);
	/* Nothing was attached: the owner is no target of it. */
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, USER.pid), ESRCH);
	/* A new target makes it startable again. */
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id), 0);
}

static void
pmcstart_after_setid_exec_detached_last_target_ESRCH(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	struct vpmu_cred setuid = USER_CHILD;

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER_CHILD.pid), 0);
	setuid.privileged = 1;
	assert_int_equal(vpmu_proc_exec(f->vm, USER_CHILD.pid, "/usr/bin/su", &setuid), 0);
	assert_int_equal(f->sigio, 1);			/* its last target left */
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id), ESRCH);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, USER.pid), ESRCH);
}

static void
pmcstart_after_owner_detached_from_start_ESRCH(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	/* START attached the owner: that counts as an attachment. */
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id), 0);
	assert_int_equal(vpmu_pmc_stop(f->vm, &USER, id), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, USER.pid), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id), ESRCH);
}

static void
pmcstart_descendants_after_subtree_detached_ESRCH(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, VPMU_F_DESCENDANTS);

	/* 100 and its child 101 are targets; detaching 100 drops both. */
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, id, USER.pid), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, USER.pid), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, id), ESRCH);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, id, USER.pid), ESRCH);
}

static void
pmcattach_pmcdetach_nonexistent_pid_ESRCH(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &ROOT, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_attach(f->vm, &ROOT, id, 9999), ESRCH);
	assert_int_equal(vpmu_pmc_detach(f->vm, &ROOT, id, 9999), ESRCH);
}

static void
pmcdetach_target_not_monitored_ESRCH(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id id = TC_PV(f, &ROOT, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_detach(f->vm, &ROOT, id, OTHER.pid), ESRCH);
}

/* ---- EPROGMISMATCH (GETMODULEVERSION's rule) ------------------------------- */

static void
getmoduleversion_newer_client_EPROGMISMATCH(void **state)
{
	struct fx *f = *state;
	uint32_t v;

	v = VPMU_PMC_VERSION + 0x00010000;	/* a newer minor */
	assert_int_equal(vpmu_vm_get_moduleversion(f->vm, &USER, &v), VPMU_EPROGMISMATCH);
	v = VPMU_PMC_VERSION + 0x1234;		/* a newer patch is fine */
	assert_int_equal(vpmu_vm_get_moduleversion(f->vm, &USER, &v), 0);
	assert_int_equal(v, 0x0A000000u);
	v = 0x03010000;				/* an old client */
	assert_int_equal(vpmu_vm_get_moduleversion(f->vm, &USER, &v), 0);
	assert_int_equal(v, 0x0A000000u);
}

#define T(fn)	cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(pmcadmin_disable_thread_row_EBUSY),
		T(pmcadmin_active_system_pmc_EBUSY),
		T(pmcattach_row_in_use_EBUSY),
		T(pmcrw_newvalue_running_EBUSY),
		T(pmcsetcount_running_EBUSY),
		T(pmcstart_log_modifiers_without_log_EDOOFUS),
		T(pmcstart_system_sampling_without_log_EDOOFUS),
		T(pmcattach_same_target_again_EEXIST),
		T(op_bad_address_EFAULT),
		T(pmc_invalid_handle_EINVAL),
		T(getpmcinfo_bad_cpu_EINVAL),
		T(configurelog_unknown_flags_EINVAL),
		T(configurelog_deconfigure_without_log_EINVAL),
		T(flushlog_without_log_EINVAL),
		T(writelog_without_log_EINVAL),
		T(pmcadmin_bad_cpu_EINVAL),
		T(pmcadmin_bad_request_EINVAL),
		T(pmcadmin_bad_pmc_EINVAL),
		T(pmcallocate_no_suitable_pmc_EINVAL),
		T(pmcallocate_invalid_mode_EINVAL),
		T(pmcallocate_invalid_cpu_EINVAL),
		T(pmcallocate_process_pmc_on_a_cpu_EINVAL),
		T(pmcallocate_system_pmc_on_any_cpu_EINVAL),
		T(pmcallocate_unknown_flags_EINVAL),
		T(pmcattach_system_pmc_EINVAL),
		T(pmcattach_illegal_pid_EINVAL),
		T(pmcdetach_not_attached_to_target_EINVAL),
		T(pmcrw_illegal_flags_EINVAL),
		T(pmcgetmsr_not_process_mode_EINVAL),
		T(pmcgetmsr_not_solely_on_owner_EINVAL),
		T(pmcgetmsr_descendants_EINVAL),
		T(pmcgetmsr_class_without_rdpmc_ENOSYS),
		T(getpmcinfo_disabled_cpu_ENXIO),
		T(pmcallocate_system_pmc_on_disabled_cpu_ENXIO),
		T(pmcstart_pmcstop_system_pmc_on_disabled_cpu_ENXIO),
		T(pmcallocate_caps_not_in_class_EOPNOTSUPP),
		T(pmcadmin_unprivileged_or_jailed_EPERM),
		T(pmcattach_no_permission_EPERM),
		T(pmcattach_jailed_caller_EPERM),
		T(pmcattach_after_getmsr_EPERM),
		T(pmcallocate_system_pmc_unprivileged_EPERM),
		T(op_caller_without_pmcs_ESRCH),
		T(pmcstart_after_all_targets_gone_ESRCH),
		T(pmcstart_after_last_target_detached_ESRCH),
		T(pmcstart_after_setid_exec_detached_last_target_ESRCH),
		T(pmcstart_after_owner_detached_from_start_ESRCH),
		T(pmcstart_descendants_after_subtree_detached_ESRCH),
		T(pmcattach_pmcdetach_nonexistent_pid_ESRCH),
		T(pmcdetach_target_not_monitored_ESRCH),
		T(getmoduleversion_newer_client_EPROGMISMATCH),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
