/*
 * tsc_khz.c -- print the guest TSC frequency KVM gives a new vCPU
 * (KVM_GET_TSC_KHZ), in kHz, for exact.sh to turn guest RDTSC ticks into
 * time.  Exit 77 without a usable /dev/kvm.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

int
main(void)
{
	int kvm, vm, vcpu, khz;

	if ((kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0 ||
	    (vm = ioctl(kvm, KVM_CREATE_VM, 0)) < 0 ||
	    (vcpu = ioctl(vm, KVM_CREATE_VCPU, 0)) < 0) {
		perror("tsc_khz: /dev/kvm");
		return (77);
	}
	if ((khz = ioctl(vcpu, KVM_GET_TSC_KHZ, 0)) <= 0) {
		perror("tsc_khz: KVM_GET_TSC_KHZ");
		return (1);
	}
	printf("%d\n", khz);
	close(vcpu);
	close(vm);
	close(kvm);
	return (0);
}
