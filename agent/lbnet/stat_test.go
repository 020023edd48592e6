package lbnet

import (
	"strings"
	"testing"
)

// TestParseStat reads `show stat` as HAProxy 2.6 prints it and keeps the server rows.
func TestParseStat(t *testing.T) {
	const out = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,check_status,check_code,check_duration,hrsp_1xx,last_chk\n" +
		"lb1_80,FRONTEND,,,0,1,4000,9,,,,,,,,,,OPEN,,,,,,,,,1,2,0,,,,0,0,0,1,,,,,\n" +
		"lb1_80,m11,0,0,0,1,,3,,,,,,0,0,0,0,DOWN,1,1,0,1,1,5,5,,1,3,1,,3,,2,0,,1,L4CON,,0,,Connection refused\n" +
		"lb1_80,m12,0,0,0,1,,3,,,,,,0,0,0,0,UP,1,1,0,0,0,9,0,,1,3,2,,3,,2,0,,1,L4OK,,0,,\n" +
		"lb1_80,BACKEND,0,0,0,1,400,9,,,,,,0,0,0,0,UP,2,2,0,,0,9,0,,1,3,0,,9,,1,0,,1,,,,,\n\n"
	got, err := parseStat(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (ServerStat{Backend: "lb1_80", Server: "m11", Status: "DOWN", CheckStatus: "L4CON", LastCheck: "Connection refused"}) ||
		got[1].Server != "m12" || got[1].Status != "UP" {
		t.Fatalf("parsed %+v", got)
	}
	spec := Spec{ID: 1, Listeners: []Listener{{Port: 80, Protocol: TCP, TargetPort: 8080}}}
	by := map[string][]ServerStat{}
	for _, s := range got {
		by[s.Backend+"/"+s.Server] = append(by[s.Backend+"/"+s.Server], s)
	}
	if h, why := memberHealth(spec, Member{ID: 11}, by); h != Down || !strings.Contains(why, "L4CON") {
		t.Errorf("m11: %s %q", h, why)
	}
	if h, _ := memberHealth(spec, Member{ID: 12}, by); h != Up {
		t.Errorf("m12: %s", h)
	}
	if h, _ := memberHealth(spec, Member{ID: 13}, by); h != Unknown {
		t.Errorf("m13 (not in the proxy yet): %s", h)
	}
}
