/*
 * logcount -- a pmclog log's sampling figures, for sample_rate.sh.
 *
 *   logcount LOG
 *
 * Reads LOG with the library's reader and prints one line:
 *
 *   samples S dropnotify N bytes B seconds T rate R
 *
 * S is the CALLCHAIN records, N the DROPNOTIFY records (one per sweep that
 * found its ring had overflowed; how many samples were lost is in the
 * driver statistics, intr_bufferfull, which vpmustat prints; since issue 14
 * a vCPU empties its own ring at half full and N is 0), T the span
 * between the first and the last CALLCHAIN timestamps in seconds
 * (INITIALIZE's TSC frequency), R = S / T.
 * Exit status: 0; 1 the log cannot be read or is bad; 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vpmu/pmclog.h>

int
main(int argc, char **argv)
{
	static struct vpmu_pmclog_ev ev;
	vpmu_pmclog_reader *r;
	uint64_t ns = 0, nd = 0, freq = 0, t0 = 0, t1 = 0;
	double secs;
	struct stat sb;
	int fd, st, error;

	if (argc != 2) {
		fprintf(stderr, "usage: logcount LOG\n");
		return (2);
	}
	if ((fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &sb) != 0) {
		fprintf(stderr, "logcount: %s: %s\n", argv[1], strerror(errno));
		return (1);
	}
	if ((error = vpmu_pmclog_open_fd(fd, &r)) != 0) {
		fprintf(stderr, "logcount: %s\n", strerror(error));
		return (1);
	}
	while ((st = vpmu_pmclog_read(r, &ev)) == 0) {
		switch (ev.type) {
		case VPMU_PMCLOG_INITIALIZE:
			freq = ev.u.initialize.tsc_freq;
			break;
		case VPMU_PMCLOG_CALLCHAIN:
			if (ns++ == 0)
				t0 = ev.tsc;
			t1 = ev.tsc;
			break;
		case VPMU_PMCLOG_DROPNOTIFY:
			nd++;
			break;
		}
	}
	if (st != ENODATA) {
		fprintf(stderr, "logcount: %s: %s\n", argv[1],
		    st == EAGAIN ? "log cut short" : vpmu_pmclog_error(r));
		vpmu_pmclog_close(r);
		return (1);
	}
	vpmu_pmclog_close(r);
	close(fd);
	secs = freq != 0 && t1 > t0 ? (double)(t1 - t0) / (double)freq : 0.0;
	printf("samples %" PRIu64 " dropnotify %" PRIu64 " bytes %jd seconds %.3f rate %.0f\n",
	    ns, nd, (intmax_t)sb.st_size, secs, secs > 0 ? (double)ns / secs : 0.0);
	return (0);
}
