/*
 * replay.c -- a main() for the fuzz targets where libFuzzer is not there
 * (a gcc build): runs LLVMFuzzerTestOneInput once on every file named,
 * or on every file in a directory named, in name order.  This is how the
 * kept corpus (test/fuzz/corpus/NAME: seeds and the reproducers of what
 * fuzzing found) runs as a regression test with every compiler.
 *
 *   fuzz_NAME FILE|DIR ...
 *
 * Exit 0 when every input ran (a target aborts on a failed check), 2 on
 * a usage or read error or when there was no input at all.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

/* A custom mutator's call into libFuzzer: never reached when replaying. */
size_t
LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max)
{
	(void)data;
	(void)max;
	return (size);
}

static unsigned ran;

static int
run_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	size_t n;
	FILE *f;

	if ((f = fopen(path, "rb")) == NULL || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return (-1);
	}
	n = (size_t)st.st_size;
	/* one byte more, so that an empty input still has a buffer */
	if ((buf = malloc(n + 1)) == NULL || fread(buf, 1, n, f) != n) {
		fprintf(stderr, "replay: %s: cannot read %zu bytes\n", path, n);
		free(buf);
		fclose(f);
		return (-1);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	ran++;
	return (0);
}

static int
name_cmp(const struct dirent **a, const struct dirent **b)
{
	return (strcmp((*a)->d_name, (*b)->d_name));
}

static int
no_dots(const struct dirent *d)
{
	return (d->d_name[0] != '.');
}

static int
run_path(const char *path)
{
	struct dirent **names;
	char sub[4096];
	struct stat st;
	int i, n, bad = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return (-1);
	}
	if (!S_ISDIR(st.st_mode))
		return (run_file(path));
	if ((n = scandir(path, &names, no_dots, name_cmp)) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return (-1);
	}
	for (i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode) && run_file(sub) != 0)
			bad = 1;
		free(names[i]);
	}
	free(names);
	return (bad ? -1 : 0);
}

int
main(int argc, char **argv)
{
	int i, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR ...\n", argv[0]);
		return (2);
	}
	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		if (run_path(argv[i]) != 0)
			bad = 1;
	printf("%s: %u inputs ran\n", argv[0], ran);
	if (ran == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		return (2);
	}
	return (bad ? 2 : 0);
}
