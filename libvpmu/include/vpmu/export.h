/* <vpmu/export.h> -- symbol visibility for libvpmu's public functions. */
#ifndef VPMU_EXPORT_H
#define VPMU_EXPORT_H
#if defined(__GNUC__)
#define VPMU_EXTERN	__attribute__((visibility("default")))
#else
#define VPMU_EXTERN
#endif
#endif /* VPMU_EXPORT_H */
