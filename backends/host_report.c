/*
 * host_report.c -- vpmu_host_write_text() and vpmu_host_write_json().
 *
 * Both print the same facts in the same order: CPU, PMU (CPUID), KVM,
 * perf_event, sources.  The text names each fact as the kernel or the
 * manuals do (KVM_CAP_*, CPUID.1:ECX[31]) so a reader can check it by hand.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "host_internal.h"

#define LABEL_WIDTH	28

static const char *
yesno(int b)
{
	return (b ? "yes" : "no");
}

/* The end of a report: 0, or why the stream failed. */
static int
finish(FILE *f)
{
	if (fflush(f) != 0)
		return (errno != 0 ? errno : EIO);
	return (ferror(f) ? EIO : 0);
}

/* ---- text ------------------------------------------------------------------ */

static void row(FILE *f, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
row(FILE *f, const char *label, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "  %-*s ", LABEL_WIDTH - 1, label);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

static void
text_cpu(const struct vpmu_host_info *hi, FILE *f)
{
	const struct vpmu_host_cpu *cpu = &hi->cpu;

	fprintf(f, "CPU\n");
	if (!cpu->cpuid_ok) {
		row(f, "CPUID", "unavailable: %s", cpu->cpuid_error);
		return;
	}
	row(f, "vendor", "%s", cpu->vendor);
	row(f, "brand", "%s", cpu->brand);
	row(f, "family, model, stepping", "%u (0x%x), %u (0x%x), %u",
	    cpu->family, cpu->family, cpu->model, cpu->model, cpu->stepping);
	row(f, "CPUID leaves", "basic up to 0x%x, extended up to 0x%x",
	    cpu->max_leaf, cpu->max_ext_leaf);
	row(f, "PDCM", "%s (CPUID.1:ECX[15], IA32_PERF_CAPABILITIES)",
	    yesno(cpu->pdcm));
	if (cpu->hypervisor)
		row(f, "hypervisor", "yes (CPUID.1:ECX[31]), signature \"%s\", "
		    "leaves up to 0x%x", cpu->hv_signature, cpu->hv_max_leaf);
	else
		row(f, "hypervisor", "no (CPUID.1:ECX[31])");
}

static void
text_intel(const struct vpmu_host_info *hi, FILE *f)
{
	const struct vpmu_host_intel_pmu *ip = &hi->intel;
	const uint32_t *r = hi->cpu.leaf_0a;

	if (hi->cpu.max_leaf < 0xA) {
		row(f, "leaf 0xA", "absent (maximum basic leaf 0x%x)",
		    hi->cpu.max_leaf);
		return;
	}
	row(f, "leaf 0xA", "eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x%s",
	    r[0], r[1], r[2], r[3],
	    vpmu__host_is_amd(&hi->cpu) ? " (reserved on AMD)" : "");
	if (ip->version == 0) {
		row(f, "architectural PMU", "none (version 0)");
		return;
	}
	row(f, "architectural PMU", "version %u", ip->version);
	row(f, "general-purpose counters", "%u of %u bits", ip->gp_count,
	    ip->gp_width);
	row(f, "fixed counters", "%u of %u bits (mask 0x%x)", ip->fixed_count,
	    ip->fixed_width, ip->fixed_mask);
	row(f, "unavailable events", "0x%x (EBX, %u valid bits)",
	    ip->events_unavailable, ip->ebx_length);
}

static void
text_amd(const struct vpmu_host_info *hi, FILE *f)
{
	const struct vpmu_host_amd_pmu *ap = &hi->amd;

	if (ap->perfmon_v2)
		row(f, "core counters", "%u of %u bits (PerfMonV2 "
		    "NumPerfCtrCore)", ap->gp_count, ap->gp_width);
	else if (ap->core_ext)
		row(f, "core counters", "%u of %u bits (PerfCtrExtCore)",
		    ap->gp_count, ap->gp_width);
	else
		row(f, "core counters", "%u legacy ones of %u bits, if "
		    "implemented: no CPUID bit describes them",
		    ap->gp_count, ap->gp_width);
	row(f, "PerfCtrExtCore", "%s (CPUID 0x80000001.ECX[23])",
	    yesno(ap->core_ext));
	row(f, "PerfCtrExtNB, PerfCtrExtLLC", "%s, %s (ECX[24], ECX[28])",
	    yesno(ap->nb_ext), yesno(ap->llc_ext));
	if (hi->cpu.max_ext_leaf < 0x80000022u)
		row(f, "PerfMonV2", "no (no leaf 0x80000022)");
	else
		row(f, "PerfMonV2", "%s (CPUID 0x80000022.EAX[0]), "
		    "NumPerfCtrCore %u, NumPerfCtrNB %u, LbrV2StackSz %u",
		    yesno(ap->perfmon_v2), ap->num_core, ap->num_nb,
		    ap->lbr_v2_depth);
}

static void
text_pmu(const struct vpmu_host_info *hi, FILE *f)
{
	fprintf(f, "\nPMU (CPUID)\n");
	if (!hi->cpu.cpuid_ok) {
		row(f, "CPUID", "unavailable");
		return;
	}
	/*
	 * AMD's counters are described by the extended leaves; leaf 0xA is
	 * shown for every vendor, as hypervisors have been known to fill it.
	 */
	if (vpmu__host_is_amd(&hi->cpu))
		text_amd(hi, f);
	text_intel(hi, f);
}

static void
text_kvm(const struct vpmu_host_info *hi, FILE *f)
{
	const struct vpmu_host_kvm *kvm = &hi->kvm;
	const struct vpmu__kvm_cap *c;
	char buf[VPMU_ERRNAME_MAX];
	int32_t v;

	fprintf(f, "\nKVM\n");
	if (!kvm->present)
		row(f, "/dev/kvm", "absent");
	else if (!kvm->opened)
		row(f, "/dev/kvm", "present, open failed with %s",
		    vpmu__errname(kvm->open_errno, buf, sizeof(buf)));
	else
		row(f, "/dev/kvm", "present, opened read-write");
	if (kvm->opened) {
		row(f, "KVM_GET_API_VERSION", "%d", kvm->api_version);
		for (c = vpmu__kvm_caps; c->name != NULL; c++) {
			v = vpmu__kvm_cap_value(kvm, c);
			if (c->is_mask)
				row(f, c->name, "0x%x", (unsigned)v);
			else
				row(f, c->name, "%d", v);
		}
	}
	if (kvm->enable_pmu != 0)
		row(f, "kvm.enable_pmu", "%c", kvm->enable_pmu);
	else
		row(f, "kvm.enable_pmu", "absent (no "
		    "/sys/module/kvm/parameters/enable_pmu)");
}

static void
text_open(FILE *f, const char *label, int e)
{
	char buf[VPMU_ERRNAME_MAX];

	if (e == 0)
		row(f, label, "opens");
	else
		row(f, label, "fails with %s (%s)", vpmu__errname(e, buf, sizeof(buf)),
		    strerror(e));
}

static void
text_perf(const struct vpmu_host_info *hi, FILE *f)
{
	const struct vpmu_host_perf *perf = &hi->perf;

	fprintf(f, "\nperf_event\n");
	if (perf->paranoid_known)
		row(f, "perf_event_paranoid", "%d", perf->paranoid);
	else
		row(f, "perf_event_paranoid", "unknown (no "
		    "/proc/sys/kernel/perf_event_paranoid)");
	row(f, "core PMU (sysfs)", "%s", perf->core_pmu[0] != '\0' ?
	    perf->core_pmu : "none");
	text_open(f, "HW instructions", perf->hw_instructions_errno);
	text_open(f, "SW task-clock", perf->sw_task_clock_errno);
	if (perf->msr_type < 0)
		row(f, "msr/tsc", "no msr PMU");
	else if (!perf->msr_tsc_event)
		row(f, "msr/tsc", "msr PMU (type %d) has no tsc event",
		    perf->msr_type);
	else if (perf->msr_tsc_errno == 0)
		row(f, "msr/tsc", "opens (msr PMU type %d, config 0x%llx)",
		    perf->msr_type, (unsigned long long)perf->msr_tsc_config);
	else
		text_open(f, "msr/tsc", perf->msr_tsc_errno);
}

static void
text_sources(const vpmu_host *host, FILE *f)
{
	int i;

	fprintf(f, "\nSources\n");
	for (i = 0; i < VPMU__HOST_NSOURCES; i++)
		fprintf(f, "  %-*s %s: %s\n", LABEL_WIDTH - 1,
		    vpmu__host_source_names[i],
		    host->verdict[i].err == 0 ? "usable" : "unavailable",
		    host->verdict[i].why);
}

int
vpmu_host_write_text(const vpmu_host *host, FILE *f)
{
	if (host == NULL || f == NULL)
		return (EINVAL);
	text_cpu(&host->info, f);
	text_pmu(&host->info, f);
	text_kvm(&host->info, f);
	text_perf(&host->info, f);
	text_sources(host, f);
	return (finish(f));
}

/* ---- JSON ------------------------------------------------------------------ */

void
vpmu__json_string(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* A pretty-printing emitter: it only tracks commas and indentation. */
struct json {
	FILE	*f;
	int	 depth;
	int	 first;		/* nothing written yet in the open container */
};

static void
j_key(struct json *j, const char *key)
{
	fprintf(j->f, "%s\n%*s", j->first ? "" : ",", 2 * j->depth, "");
	j->first = 0;
	if (key != NULL) {
		vpmu__json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void
j_open(struct json *j, const char *key, char brace)
{
	j_key(j, key);
	fputc(brace, j->f);
	j->depth++;
	j->first = 1;
}

static void
j_close(struct json *j, char brace)
{
	j->depth--;
	if (!j->first)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(brace, j->f);
	j->first = 0;
}

static void
j_str(struct json *j, const char *key, const char *s)
{
	j_key(j, key);
	vpmu__json_string(j->f, s);
}

static void
j_int(struct json *j, const char *key, long long v)
{
	j_key(j, key);
	fprintf(j->f, "%lld", v);
}

static void
j_bool(struct json *j, const char *key, int b)
{
	j_key(j, key);
	fputs(b ? "true" : "false", j->f);
}

static void
j_null(struct json *j, const char *key)
{
	j_key(j, key);
	fputs("null", j->f);
}

/* CPUID leaves and registers are names, not quantities: hex strings. */
static void
j_hex(struct json *j, const char *key, uint32_t v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "0x%08x", v);
	j_str(j, key, buf);
}

/* EAX, EBX, ECX, EDX on one line. */
static void
j_regs(struct json *j, const char *key, const uint32_t r[4])
{
	j_key(j, key);
	fprintf(j->f, "[\"0x%08x\", \"0x%08x\", \"0x%08x\", \"0x%08x\"]",
	    r[0], r[1], r[2], r[3]);
}

/* An errno as its name, null for 0 (success). */
static void
j_errno(struct json *j, const char *key, int e)
{
	char buf[VPMU_ERRNAME_MAX];

	if (e == 0)
		j_null(j, key);
	else
		j_str(j, key, vpmu__errname(e, buf, sizeof(buf)));
}

static void
json_cpu(const struct vpmu_host_info *hi, struct json *j)
{
	const struct vpmu_host_cpu *cpu = &hi->cpu;

	j_open(j, "cpu", '{');
	j_bool(j, "cpuid_ok", cpu->cpuid_ok);
	if (cpu->cpuid_ok)
		j_null(j, "cpuid_error");
	else
		j_str(j, "cpuid_error", cpu->cpuid_error);
	j_str(j, "vendor", cpu->vendor);
	j_str(j, "brand", cpu->brand);
	j_int(j, "family", cpu->family);
	j_int(j, "model", cpu->model);
	j_int(j, "stepping", cpu->stepping);
	j_hex(j, "max_leaf", cpu->max_leaf);
	j_hex(j, "max_ext_leaf", cpu->max_ext_leaf);
	j_bool(j, "pdcm", cpu->pdcm);
	j_bool(j, "hypervisor", cpu->hypervisor);
	if (cpu->hypervisor) {
		j_str(j, "hv_signature", cpu->hv_signature);
		j_hex(j, "hv_max_leaf", cpu->hv_max_leaf);
	} else {
		j_null(j, "hv_signature");
		j_null(j, "hv_max_leaf");
	}
	j_regs(j, "leaf_0a", cpu->leaf_0a);
	j_hex(j, "leaf_80000001_ecx", cpu->leaf_80000001_ecx);
	j_regs(j, "leaf_80000022", cpu->leaf_80000022);
	j_close(j, '}');
}

static void
json_pmu(const struct vpmu_host_info *hi, struct json *j)
{
	const struct vpmu_host_intel_pmu *ip = &hi->intel;
	const struct vpmu_host_amd_pmu *ap = &hi->amd;

	j_open(j, "intel_pmu", '{');
	j_int(j, "version", ip->version);
	j_int(j, "gp_count", ip->gp_count);
	j_int(j, "gp_width", ip->gp_width);
	j_int(j, "ebx_length", ip->ebx_length);
	j_hex(j, "events_unavailable", ip->events_unavailable);
	j_int(j, "fixed_count", ip->fixed_count);
	j_int(j, "fixed_width", ip->fixed_width);
	j_hex(j, "fixed_mask", ip->fixed_mask);
	j_bool(j, "anythread_deprecated", ip->anythread_deprecated);
	j_close(j, '}');

	j_open(j, "amd_pmu", '{');
	j_bool(j, "core_ext", ap->core_ext);
	j_bool(j, "nb_ext", ap->nb_ext);
	j_bool(j, "llc_ext", ap->llc_ext);
	j_bool(j, "perfmon_v2", ap->perfmon_v2);
	j_bool(j, "lbr_stack", ap->lbr_stack);
	j_int(j, "num_core", ap->num_core);
	j_int(j, "num_nb", ap->num_nb);
	j_int(j, "lbr_v2_depth", ap->lbr_v2_depth);
	j_int(j, "gp_count", ap->gp_count);
	j_int(j, "gp_width", ap->gp_width);
	j_close(j, '}');
}

static void
json_kvm(const struct vpmu_host_info *hi, struct json *j)
{
	const struct vpmu_host_kvm *kvm = &hi->kvm;
	const struct vpmu__kvm_cap *c;
	char param[2] = { kvm->enable_pmu, '\0' };

	j_open(j, "kvm", '{');
	j_bool(j, "present", kvm->present);
	j_bool(j, "opened", kvm->opened);
	j_errno(j, "open_errno", kvm->open_errno);
	if (kvm->opened)
		j_int(j, "api_version", kvm->api_version);
	else
		j_null(j, "api_version");
	/* Capabilities by name; null when /dev/kvm could not be asked. */
	j_open(j, "caps", '{');
	for (c = vpmu__kvm_caps; c->name != NULL; c++) {
		if (kvm->opened)
			j_int(j, c->key, vpmu__kvm_cap_value(kvm, c));
		else
			j_null(j, c->key);
	}
	j_close(j, '}');
	if (kvm->enable_pmu != 0)
		j_str(j, "enable_pmu", param);
	else
		j_null(j, "enable_pmu");
	j_close(j, '}');
}

static void
json_perf(const struct vpmu_host_info *hi, struct json *j)
{
	const struct vpmu_host_perf *perf = &hi->perf;
	char config[24];

	j_open(j, "perf", '{');
	if (perf->paranoid_known)
		j_int(j, "paranoid", perf->paranoid);
	else
		j_null(j, "paranoid");
	if (perf->core_pmu[0] != '\0')
		j_str(j, "core_pmu", perf->core_pmu);
	else
		j_null(j, "core_pmu");
	j_errno(j, "hw_instructions_errno", perf->hw_instructions_errno);
	j_errno(j, "sw_task_clock_errno", perf->sw_task_clock_errno);
	if (perf->msr_type >= 0)
		j_int(j, "msr_type", perf->msr_type);
	else
		j_null(j, "msr_type");
	j_bool(j, "msr_tsc_event", perf->msr_tsc_event);
	j_errno(j, "msr_tsc_errno", perf->msr_tsc_errno);
	snprintf(config, sizeof(config), "0x%llx",
	    (unsigned long long)perf->msr_tsc_config);
	j_str(j, "msr_tsc_config", config);
	j_close(j, '}');
}

static void
json_sources(const vpmu_host *host, struct json *j)
{
	int i;

	j_open(j, "sources", '{');
	for (i = 0; i < VPMU__HOST_NSOURCES; i++) {
		j_open(j, vpmu__host_source_names[i], '{');
		j_bool(j, "usable", host->verdict[i].err == 0);
		j_errno(j, "error", host->verdict[i].err);
		j_str(j, "reason", host->verdict[i].why);
		j_close(j, '}');
	}
	j_close(j, '}');
}

int
vpmu_host_write_json(const vpmu_host *host, FILE *f)
{
	struct json j = { f, 0, 1 };

	if (host == NULL || f == NULL)
		return (EINVAL);
	fputc('{', f);
	j.depth = 1;
	json_cpu(&host->info, &j);
	json_pmu(&host->info, &j);
	json_kvm(&host->info, &j);
	json_perf(&host->info, &j);
	json_sources(host, &j);
	j_close(&j, '}');
	fputc('\n', f);
	return (finish(f));
}
