#!/usr/bin/env python3
# bench-auto-table.py OUT -- the Markdown table of scripts/bench-auto.sh's runs.
# auto/min(jps,hpa) is the larger of the two geometric means over both orders.
import json,glob,os,sys,math
d=sys.argv[1] if len(sys.argv)>1 else 'build/bench-auto'
def load(p):
    r={}
    for l in open(p):
        l=l.strip()
        if not l: continue
        j=json.loads(l)
        if 'compare' in j: r['cmp']=j
        else: r[j['algorithm']]=j
    return r
maps=sorted(set(os.path.basename(p).split('.')[0] for p in glob.glob(d+'/*.autohpa.json')))
print('| map | size | queries | hpa mean excess | hpa worst excess | hpa mean us | jps mean us | auto mean us | auto/hpa (both orders) | auto/jps (both orders) | auto/min(jps,hpa) | auto mean excess | auto ran | astar/jps p50 |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for m in maps:
    a=load(f'{d}/{m}.autohpa.json'); b=load(f'{d}/{m}.autojps.json'); c=load(f'{d}/{m}.astarjps.json')
    ar=load(f'{d}/{m}.hpaauto.json'); br=load(f'{d}/{m}.jpsauto.json')
    h=a['hpa']; j=b['jps']
    rh=math.sqrt(a['cmp']['mean_ratio']/ar['cmp']['mean_ratio'])
    rj=math.sqrt(b['cmp']['mean_ratio']/br['cmp']['mean_ratio'])
    aj=c['cmp']['p50_ratio']
    print(f"| {m} | {h['width']}x{h['height']} | {h['queries']} | {100*h['mean_subopt']:.3f}% | {100*h['max_subopt']:.2f}% | {h['mean_us']:.1f} | {j['mean_us']:.1f} | {a['auto']['mean_us']:.1f} | {a['cmp']['mean_ratio']:.3f} / {1/ar['cmp']['mean_ratio']:.3f} | {b['cmp']['mean_ratio']:.3f} / {1/br['cmp']['mean_ratio']:.3f} | {max(rh,rj):.3f} | {100*a['auto']['mean_subopt']:.3f}% (hpa {100*h['mean_subopt']:.3f}%) | {a['auto'].get('note','').replace('ran ','')} | {aj:.1f}x |")
