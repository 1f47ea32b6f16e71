#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdbool.h>
#include <math.h>
#include <time.h>
#include "skin_avx2.h"
#include "transposed_avx2.h"
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static float rnd(){return rand()/(float)RAND_MAX*2-1;}
int main(int argc,char**argv){
  int N=argc>1?atoi(argv[1]):1024, K=argc>2?atoi(argv[2]):4, J=64;
  float *pal=aligned_alloc(64,J*64);
  for(int j=0;j<J;j++){ float a=rnd()*3, c=cosf(a), s=sinf(a); float m[16]={c,-s,0,rnd(), s,c,0,rnd(), 0,0,1,rnd(), 0,0,0,1}; for(int e=0;e<16;e++) pal[16*j+e]=m[e]; }
  float *blocks=malloc(N*48), *soa=malloc(N*24); uint32_t *jo=malloc(N*K*4); float *w=malloc(N*K*4);
  for(int v=0;v<N;v++){ float p[3]={rnd(),rnd(),rnd()}, n[3]={rnd(),rnd(),rnd()}; float l=sqrtf(n[0]*n[0]+n[1]*n[1]+n[2]*n[2]); for(int c=0;c<3;c++) n[c]/=l;
    float b[12]={p[0],n[0],0,0, p[1],n[1],0,0, p[2],n[2],0,0}; for(int e=0;e<12;e++) blocks[12*v+e]=b[e];
    int blk=v/8, l8=v%8; for(int c=0;c<3;c++){ soa[blk*48+c*8+l8]=p[c]; soa[blk*48+(3+c)*8+l8]=n[c]; }
    float s=0; for(int i=0;i<K;i++){ jo[K*v+i]=rand()%J; w[K*v+i]=rand()/(float)RAND_MAX+0.1f; s+=w[K*v+i]; } for(int i=0;i<K;i++) w[K*v+i]/=s; }
  float *p1=malloc(N*12),*n1=malloc(N*12),*p2=malloc(N*12),*n2=malloc(N*12);
  struct SkinGroupArgs a={0}; a.form=0;a.influences=K;a.first=0;a.count=N;a.blocks=blocks;a.joints=jo;a.weights=w;a.palette=pal;a.pos=p1;a.pos_stride=3;a.nrm=n1;a.nrm_stride=3;a.write_normals=1;
  int mode=argc>3?atoi(argv[3]):1;
  skin_group_avx2(&a); if(mode) renormalize_rows_avx2(n1,N,3,true,mode);
  skin_soa_pn(K,N,soa,jo,w,pal,p2,n2,mode);
  double md=0; for(int i=0;i<3*N;i++){ md=fmax(md,fabs(p1[i]-p2[i])); md=fmax(md,fabs(n1[i]-n2[i])); } printf("max diff %g\n",md);
  for(int round=0;round<3;round++){
    int reps=2000000/N+1; double t=now(); for(int r=0;r<reps;r++){ skin_group_avx2(&a); if(mode) renormalize_rows_avx2(n1,N,3,true,mode);} double t1=(now()-t)/reps/N*1e9;
    t=now(); for(int r=0;r<reps;r++) skin_soa_pn(K,N,soa,jo,w,pal,p2,n2,mode); double t2=(now()-t)/reps/N*1e9;
    printf("N=%d K=%d mode=%d: horizontal+renorm %.3f ns  soa %.3f ns  ratio %.2f\n",N,K,mode,t1,t2,t1/t2);
  }
}
