// mesh8: chronosync's mesh8-jitter packet workload in ns-3, for the CPU and
// memory comparison of issue 34 (bench/ns3/ratio.sh, make ns3-ratio).
//
// The scenario (scenarios/mesh8-jitter.yaml) as ns-3 sees it:
//   - 8 nodes, a full mesh of point-to-point links (28 links, one /30
//     subnet each; every peer is on a directly connected network, so no
//     routing protocol runs), 20 us propagation delay, 100 Gb/s (the
//     chronosync links have no rate limit: serialisation is ~8 ns);
//   - 0.5 % random loss: a RateErrorModel (per packet) on every device's
//     receive side, so each direction of a link drops independently;
//   - jitter: the links are a JitterChannel, a point-to-point channel
//     that adds to every datagram's propagation delay one draw of a Pareto
//     distribution of shape 3 and mean 30 us (scale 20 us), in the event
//     the channel schedules anyway (as chronosync's link model does: no
//     extra event). chronosync's netem-style jitter is a zero-mean
//     Pareto-shaped deviation around the delay instead; the cost, one draw
//     per datagram, is the same;
//   - the sync protocol's probes: each node ticks every 800 us / 7 peers,
//     and each tick sends a pair (two back-to-back 72-byte UDP requests,
//     probe.PacketSize) to the next peer in turn, so every directed edge
//     (56) gets a pair every 800 us; the peer answers each request at once
//     with a 72-byte reply. Nodes start staggered by 1/8 of a tick. Probing
//     lasts 40 s of the 45 s simulated, as in chronosync (10 rounds of 4 s
//     windows), which gives the same ~11.2 M datagrams.
//
// At the end it prints the events it executed and the datagrams sent and
// delivered (both counted in the application: a "packet" is a UDP datagram
// handed to a socket).
//
// Usage: mesh8 [--seconds=45] [--probeSeconds=40] [--seed=1]

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <cstdint>
#include <cstdio>
#include <vector>

using namespace ns3;

namespace
{

const uint16_t kPort = 7100;      // probe.Port
const uint32_t kPacketSize = 72;  // probe.PacketSize
const uint8_t kRequest = 1;       // byte 3 of a probe: its kind
const uint8_t kReply = 2;

// JitterChannel is a point-to-point channel whose propagation delay is the
// Delay attribute plus one draw of jitter per packet. It replaces the base
// class's TransmitStart (which schedules the receive after Delay) and keeps
// the rest: devices, wire state, attributes.
class JitterChannel : public PointToPointChannel
{
  public:
    Ptr<RandomVariableStream> jitter; // ns

    bool TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src, Time txTime) override
    {
        Ptr<PointToPointNetDevice> dst = GetDestination(src == GetSource(0) ? 0 : 1);
        Time at = txTime + GetDelay() + NanoSeconds(static_cast<int64_t>(jitter->GetValue()));
        Simulator::ScheduleWithContext(dst->GetNode()->GetId(), at, &PointToPointNetDevice::Receive, dst, p->Copy());
        return true;
    }
};

// Mesh holds the simulation's state: one socket per node, each node's
// address of every peer (on their shared link), and the counters.
struct Mesh
{
    std::vector<Ptr<Socket>> sockets;
    std::vector<std::vector<Ipv4Address>> peerAddr; // [node][peer]
    std::vector<uint32_t> nextPeer;                 // round-robin cursor
    Time tick;
    Time probeEnd;
    uint64_t sent = 0;
    uint64_t delivered = 0;
};

// Send counts a probe of this kind and hands it to node's socket.
void
Send(Mesh* m, uint32_t node, Ipv4Address to, uint8_t kind)
{
    m->sent++;
    uint8_t buf[kPacketSize] = {'C', 'S', 2, kind};
    m->sockets[node]->SendTo(Create<Packet>(buf, kPacketSize), 0, InetSocketAddress(to, kPort));
}

// Tick sends a pair of requests to node's next peer and schedules the next
// tick while probing lasts.
void
Tick(Mesh* m, uint32_t node)
{
    const auto& peers = m->peerAddr[node];
    uint32_t& k = m->nextPeer[node];
    Ipv4Address to = peers[k];
    k = (k + 1) % peers.size();
    Send(m, node, to, kRequest);
    Send(m, node, to, kRequest);
    if (Simulator::Now() + m->tick < m->probeEnd)
    {
        Simulator::Schedule(m->tick, &Tick, m, node);
    }
}

// Receive drains node's socket: a request is answered at once, a reply
// ends its probe.
void
Receive(Mesh* m, uint32_t node, Ptr<Socket> socket)
{
    Address from;
    Ptr<Packet> p;
    while ((p = socket->RecvFrom(from)))
    {
        m->delivered++;
        uint8_t buf[4] = {};
        p->CopyData(buf, sizeof buf);
        if (buf[3] == kRequest)
        {
            Send(m, node, InetSocketAddress::ConvertFrom(from).GetIpv4(), kReply);
        }
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    const uint32_t n = 8;
    double seconds = 45;
    double probeSeconds = 40;
    uint32_t seed = 1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("seconds", "virtual seconds simulated", seconds);
    cmd.AddValue("probeSeconds", "virtual seconds of probing", probeSeconds);
    cmd.AddValue("seed", "run number of the random streams", seed);
    cmd.Parse(argc, argv);
    RngSeedManager::SetRun(seed);

    NodeContainer nodes;
    nodes.Create(n);
    InternetStackHelper internet;
    internet.Install(nodes);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("100Gbps"));
    // Pareto of shape 3 and mean 30 us (in ns): mean = shape * scale / (shape - 1).
    Ptr<ParetoRandomVariable> jitter = CreateObject<ParetoRandomVariable>();
    jitter->SetAttribute("Shape", DoubleValue(3));
    jitter->SetAttribute("Scale", DoubleValue(20000));

    Mesh m;
    m.peerAddr.assign(n, {});
    m.nextPeer.assign(n, 0);
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    for (uint32_t a = 0; a < n; a++)
    {
        for (uint32_t b = a + 1; b < n; b++)
        {
            // The helper builds the devices and their queues; each is then
            // attached to a JitterChannel instead of the helper's channel
            // (left unused: the helper has no setting for the channel type).
            NetDeviceContainer dev = p2p.Install(nodes.Get(a), nodes.Get(b));
            Ptr<JitterChannel> ch = CreateObject<JitterChannel>();
            ch->SetAttribute("Delay", StringValue("20us"));
            ch->jitter = jitter;
            for (uint32_t i = 0; i < 2; i++)
            {
                DynamicCast<PointToPointNetDevice>(dev.Get(i))->Attach(ch);
            }
            for (uint32_t i = 0; i < 2; i++)
            {
                Ptr<RateErrorModel> loss = CreateObject<RateErrorModel>();
                loss->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
                loss->SetRate(0.005);
                dev.Get(i)->SetAttribute("ReceiveErrorModel", PointerValue(loss));
            }
            Ipv4InterfaceContainer ifs = addr.Assign(dev);
            addr.NewNetwork();
            m.peerAddr[a].push_back(ifs.GetAddress(1));
            m.peerAddr[b].push_back(ifs.GetAddress(0));
        }
    }

    m.tick = NanoSeconds(800000 / (n - 1));
    m.probeEnd = Seconds(probeSeconds);

    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<Socket> s = Socket::CreateSocket(nodes.Get(i), UdpSocketFactory::GetTypeId());
        s->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
        s->SetRecvCallback(MakeBoundCallback(&Receive, &m, i));
        m.sockets.push_back(s);
        Simulator::Schedule(m.tick * i / n, &Tick, &m, i);
    }

    Simulator::Stop(Seconds(seconds));
    Simulator::Run();
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();
    std::printf("ns-3 mesh8: %u nodes, %.0f s simulated (%.0f s probing)\n", n, seconds, probeSeconds);
    std::printf("events %llu\n", (unsigned long long)events);
    std::printf("datagrams sent %llu delivered %llu lost %llu\n",
                (unsigned long long)m.sent,
                (unsigned long long)m.delivered,
                (unsigned long long)(m.sent - m.delivered));
    return 0;
}
