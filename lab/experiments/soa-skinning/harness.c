// Times the crate's skin_group (AVX2 and AVX-512 builds, AoSoA blocks of 16 vertices) against the
// experiment's AVX2 transposed kernel (SoA blocks of 8), positions and normals, one thread, and checks
// that they agree. Usage: harness VERTICES INFLUENCES MODE (0 none, 1 precise, 2 fast).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdbool.h>
#include <math.h>
#include <time.h>
#include "skin_avx2.h"
#include "skin_avx512.h"
#include "transposed_avx2.h"
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static float rnd(){return rand()/(float)RAND_MAX*2-1;}
int main(int argc,char**argv){
  int N=argc>1?atoi(argv[1]):1024, K=argc>2?atoi(argv[2]):4, J=64, mode=argc>3?atoi(argv[3]):0;
  int NP=(N+15)/16*16;
  float *pal=aligned_alloc(64,J*64);
  for(int j=0;j<J;j++){ float a=rnd()*3, c=cosf(a), s=sinf(a); float m[16]={c,-s,0,rnd(), s,c,0,rnd(), 0,0,1,rnd(), 0,0,0,1}; for(int e=0;e<16;e++) pal[16*j+e]=m[e]; }
  float *blocks=calloc(NP*6,4), *soa=calloc(NP*6,4); uint32_t *jo=calloc(NP*K,4); float *w=calloc(NP*K,4);
  for(int v=0;v<N;v++){ float p[3]={rnd(),rnd(),rnd()}, n[3]={rnd(),rnd(),rnd()}; float l=sqrtf(n[0]*n[0]+n[1]*n[1]+n[2]*n[2]); for(int c=0;c<3;c++) n[c]/=l;
    for(int c=0;c<3;c++){ blocks[(v/16)*96+c*16+v%16]=p[c]; blocks[(v/16)*96+(3+c)*16+v%16]=n[c]; soa[(v/8)*48+c*8+v%8]=p[c]; soa[(v/8)*48+(3+c)*8+v%8]=n[c]; }
    float s=0; for(int i=0;i<K;i++){ jo[K*v+i]=rand()%J; w[K*v+i]=rand()/(float)RAND_MAX+0.1f; s+=w[K*v+i]; } for(int i=0;i<K;i++) w[K*v+i]/=s; }
  float *p1=malloc(N*12),*n1=malloc(N*12),*p2=malloc(N*12+96),*n2=malloc(N*12+96),*p3=malloc(N*12),*n3=malloc(N*12);
  struct SkinGroupArgs a={0}; a.influences=K;a.components=6;a.first=0;a.count=N;a.renormalize=mode;a.blocks=blocks;a.joints=jo;a.weights=w;a.palette=pal;a.pos=p1;a.pos_stride=3;a.nrm=n1;a.nrm_stride=3;a.write_normals=1;
  struct SkinGroupArgs b=a; b.pos=p3; b.nrm=n3;
  int with512=!getenv("NO_AVX512"); skin_group_avx2(&a); if(with512) skin_group_avx512(&b); else memcpy(p3,p1,N*12), memcpy(n3,n1,N*12);
  skin_soa_pn(K,N,soa,jo,w,pal,p2,n2,mode);
  double md=0, m5=0; for(int i=0;i<3*N;i++){ md=fmax(md,fabs(p1[i]-p2[i])); md=fmax(md,fabs(n1[i]-n2[i])); m5=fmax(m5,fabs(p1[i]-p3[i])); m5=fmax(m5,fabs(n1[i]-n3[i])); }
  printf("max diff avx2 vs experiment %g, avx2 vs avx512 %g\n",md,m5);
  for(int round=0;round<3;round++){
    int reps=getenv("REPS")?atoi(getenv("REPS")):2000000/N+1; double t=now(); for(int r=0;r<reps;r++) skin_group_avx2(&a); double t1=(now()-t)/reps/N*1e9;
    t=now(); for(int r=0;r<reps;r++) skin_soa_pn(K,N,soa,jo,w,pal,p2,n2,mode); double t2=(now()-t)/reps/N*1e9;
    t=now(); for(int r=0;r<reps&&with512;r++) skin_group_avx512(&b); double t3=(now()-t)/reps/N*1e9;
    printf("N=%d K=%d mode=%d: skin_group avx2 %.3f ns, avx512 %.3f ns; experiment avx2 %.3f ns\n",N,K,mode,t1,t3,t2);
  }
}
