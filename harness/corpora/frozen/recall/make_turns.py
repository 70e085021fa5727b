#!/usr/bin/env python3
"""Deterministic builder for the frozen recall set (standard library only, fixed seed).
Every evidence turn (marked #kN) and every question is hand-written below; only the generic
small-talk filler exchanges are placed by the seeded RNG. Run: python3 make_turns.py"""
SESSIONS = []
def S(sid, date, a, b, text):
    SESSIONS.append((sid, date, a, b, text))

# ---- Pair 1: Maya & Omar (friends, Leeds) ----
S("s01","2026-01-10","Maya","Omar","""
A: Happy new year, properly this time! I feel like we haven't caught up since before Christmas.
B: I know, December was a blur. Guess what, I'm finally doing the Lisbon trip. Going in March with my cousin Karim. #k1
A: Finally! You've been talking about that city for about three years.
--
A: Big news on my side too. Nadia got the job at that shipping company, so my sister's moved to Rotterdam. #k2
B: Wow, that's a huge move. Is she excited?
A: Terrified and excited. She keeps sending me pictures of bikes.
--
A: Also, I did a thing. I adopted a cat from the shelter on Kirkstall Road. His name is Pickle. #k3
B: Please tell me you didn't come up with that name.
A: The shelter did, and honestly it suits him. He's a little round ginger menace.
--
B: Work is mad right now. Ledgerly is launching the new payments API this month and I'm on the backend team for it. #k4
A: Is that the fintech place you joined in the summer?
B: That's the one. Good people, terrible coffee.
""")
S("s02","2026-01-17","Maya","Omar","""
B: I caved and bought a camera for the trip. A Fujifilm X-T5, second hand but mint. #k1
A: Look at you. Are you going to be one of those people who photographs every tram?
B: Absolutely yes.
--
A: I've started pottery classes, by the way. Thursday evenings at Clay Corner, the studio by the canal. #k2
B: That's brilliant. Have you made anything yet?
A: A bowl that is mostly a plate. Progress though.
--
B: How are you even finding the time with your shifts?
A: I'm on nights on the children's ward at St Brigid's, four on and four off, so Thursdays mostly work out. #k3
B: I'd last about two days on nights.
--
A: The cat has learned to open the cupboard under the sink. I need child locks for a cat.
B: Ha, he's a genius in the worst way.
""")
S("s03","2026-01-31","Maya","Omar","""
B: Slight change of plans for the trip. Karim can't get the time off, so Daniel from my old five-a-side team is coming instead. #k1
A: Oh no, poor Karim. Daniel's the tall one who does the pub quizzes?
B: That's him. He's already made a spreadsheet of restaurants. #k5
--
B: And because of Daniel's work we've moved it to April, the 9th to the 16th. #k2
A: April's nicer anyway, probably less rain.
--
A: I've had a stressful week. Pickle swallowed a hair tie and I had to rush him to the emergency vet. #k3
B: Oh no! Is he okay?
A: He's fine, but the bill came to £240 with the x-ray. #k4
B: The most expensive hair tie in history.
""")
S("s04","2026-02-14","Maya","Omar","""
A: Thank you again for the card. Turning thirty-one on the 12th of February felt weirdly fine. #k1
B: Of course. Did you do anything on the actual day?
A: Nadia surprised me! She flew over from Rotterdam for three days. #k2
B: No way, that's so lovely of her.
A: We went to The Blue Lantern, that little jazz bar behind the station, and stayed till closing. #k3
--
B: I've been doing Portuguese on Duolingo every night. I'm on a forty-day streak. #k4
A: Can you order a coffee yet?
B: I can tell you the owl is blue. Priorities.
""")
S("s05","2026-03-07","Maya","Omar","""
A: Okay, I need moral support. I've applied for the charge nurse position on the ward. #k1
B: You'll be amazing at that. When do you hear back?
A: The interview's in two weeks. I'm practising my answers on the cat.
--
B: My landlord is putting the rent up by £120 a month, so I'm looking at flats in Headingley. #k2
A: Headingley's nice. Closer to the park too.
--
B: At least the trip is sorted. We booked an apartment in Alfama with a tiny balcony. #k3
A: The old neighbourhood with all the hills? Your calves are going to hate you.
""")
S("s06","2026-04-20","Maya","Omar","""
B: I'm back! Lisbon was unreal. The best day was the trip out to Sintra, all those palaces in the fog. #k1
A: Welcome home! I saw your photos, they're gorgeous.
B: And I queued forty minutes for the custard tarts at Pastéis de Belém. Worth every second. #k2
A: Did anything go wrong? Something always goes wrong.
B: I left my sunglasses on the number 28 tram on day two. Never saw them again. #k3
--
A: My news: I got the charge nurse job! I start on May 4th. #k4
B: Maya!! That's amazing, congratulations.
A: I'm thrilled and also slightly sick.
""")
S("s07","2026-05-16","Maya","Omar","""
A: First two weeks as charge nurse done. The best part is I'm on day shifts now, no more nights. #k1
B: Your sleep must be so much better.
A: I actually saw a sunrise from the right side for once.
--
B: And I'm officially a Headingley resident. Moved in on the 1st of May, and the flat has a balcony. #k2
A: A balcony! You're going to grow herbs and become insufferable.
--
B: Also Karim's getting married in September, in Manchester, and guess who he asked to give the best man speech. Me. #k3
A: Oh no. Oh yes. You'd better start writing now.
B: I've got three jokes so far and none of them can be said in front of his gran.
""")
S("s08","2026-06-13","Maya","Omar","""
A: Nadia and I have booked a sisters' trip to Porto in August. #k1
B: Amazing, you'll love it. Eat all the francesinhas.
--
A: Also Pickle is officially on a diet. The vet said he needs to lose 500 grams. #k2
B: Poor guy. He'll blame you personally.
--
B: Small news from me: the café Northern Bean is letting me hang my Lisbon photos. Opening night is June 27th. #k3
A: Your first exhibition! I'll be there, obviously.
B: I'm printing the palace ones really big.
""")

# ---- Pair 2: Lena & Jakob (siblings, Bristol) ----
S("s09","2026-02-02","Lena","Jakob","""
A: Okay, it's official, I signed for the flat in Bedminster. Two bedrooms, moving in on March 1st. #k1
B: Finally out of Clifton! Your current place is the size of a shoebox.
A: A shoebox with mould. I won't miss it.
--
B: Otto says hello, by the way. My daft beagle is asleep on my feet as usual. #k2
A: How's he been?
B: Loud. He howled at the bin lorry for ten minutes this morning.
--
A: How are the year elevens treating you?
B: Mock exams this week. I'm marking thirty chemistry papers tonight. Teaching is so glamorous. #k3
--
A: We also need to talk about Mum's sixtieth. It's on April 18th and we've done zero planning. #k4
B: I know. Let's do something proper for sixty.
""")
S("s10","2026-02-09","Lena","Jakob","""
B: Right, Mum's birthday. What about a surprise dinner at Trattoria Sole? She loves their gnocchi. #k1
A: Perfect. I'll call them about the back room.
--
A: In other news, I bought a second-hand cargo bike. Six hundred and fifty quid. #k2
B: You're going to carry your whole flat across Bristol on it, aren't you?
--
B: How's work? Still testing that booking app?
A: Yeah, I'm the UX researcher on Wanderly's checkout redesign, so I'm running all the user interviews. #k3
B: You'd make a great detective.
""")
S("s11","2026-02-23","Lena","Jakob","""
A: Bad news. The Bedminster flat fell through, the landlord decided to sell it. #k1
B: No! After all that?
A: Good news though: I found a place in Easton and I move on March 15th instead. #k2
B: Easton's great, and it's closer to me.
--
B: I've asked Felix if we can borrow his van for the move. He said yes as long as we fill the tank. #k3
A: Deal. I'll buy the pizza.
""")
S("s12","2026-03-16","Lena","Jakob","""
A: Survived the move! Every box is still packed but I'm in.
B: Told you the van would be big enough.
--
A: My downstairs neighbour Ruth brought me a lemon cake. She's a retired piano teacher and has a grand piano in her front room. #k1
B: That's the dream neighbour.
--
B: I'm taking thirty year nines to the Eden Project in Cornwall in May. Send help. #k2
A: You'll need a headcount every ten minutes.
""")
S("s13","2026-04-19","Lena","Jakob","""
A: Mum hasn't stopped talking about last night.
B: When Aunt Greta walked out of the back room I thought Mum was going to faint. She flew all the way from Vienna for it. #k1
A: Best surprise ever.
--
B: And she cried at the present. I think the Lake District weekend was the right call. #k2
A: She's already looking at walking routes.
--
B: Also, don't laugh, I'm thinking about getting Otto a sibling. Another rescue. #k3
A: He's going to be so jealous.
""")
S("s14","2026-05-10","Lena","Jakob","""
B: So... meet Juno. She's a retired racing greyhound, we picked her up on Saturday. #k1
A: Jakob! She's beautiful. How's Otto taking it?
B: He's sulking under the table, but they shared the sofa last night.
--
A: I've started piano lessons with Ruth downstairs, on Tuesday evenings. #k2
B: Ha! I knew that piano would get you eventually.
--
A: Also work gave me the lead researcher title. Same desk, more meetings. #k3
B: Congrats! Dinner's on you then.
""")
S("s15","2026-06-07","Lena","Jakob","""
A: Mia and I booked Iceland for July! Ten days, driving the south coast. #k1
B: Amazing. Is Mia doing all the planning as usual?
A: She has a colour-coded itinerary already.
--
B: The Eden Project trip got pushed back because of the bus strike. It's on June 20th now. #k2
A: At least the weather will be better.
--
B: The head at Ashton Park has asked me to run the school science fair again next year. #k3
A: You'll be running the whole school by forty.
""")
S("s16","2026-07-25","Lena","Jakob","""
A: Back from Iceland. We rented a campervan and saw puffins on the cliffs near Vík. #k1
B: Puffins! Jealous. Did Mia drive the whole time?
A: We split it. The gravel roads were terrifying.
--
B: Big news from me: I've applied to be head of the science department. #k2
A: That's brilliant, you'd be perfect for it.
--
B: Mum finally booked her Lake District weekend, by the way. August 22nd. #k3
A: Only took her four months.
""")

# ---- Pair 3: Priya & Sam (colleagues, Leeds) ----
S("s17","2026-03-02","Priya","Sam","""
A: I did it. I signed up for the Manchester Marathon. April 26th. #k1
B: You're mad. Brilliant, but mad.
--
B: My life is currently kitchen catalogues. We're finally ripping out the old kitchen, and Dev Malhotra is doing the build. #k2
A: Is Dev the builder who did your loft?
B: Same guy. The only builder in Leeds who answers his phone. #k4
--
B: And Ella starts nursery in September, which feels impossible. #k3
A: She was a baby five minutes ago!
""")
S("s18","2026-03-09","Priya","Sam","""
A: Eighteen miles on Sunday. My legs have filed a complaint. The long runs are always on Sundays now. #k1
B: I drove eighteen miles on Sunday and needed a nap.
--
B: We've set the kitchen budget at £14,000. Hannah says that's a hard ceiling. #k2
A: Famous last words.
--
A: The Canal Striders are running a pacing group for the marathon, which helps a lot. #k3
B: Is that your running club?
A: Yep, we meet Tuesday and Thursday nights along the towpath. #k4
""")
S("s19","2026-03-23","Priya","Sam","""
A: Disaster. I strained my calf on the long run. #k1
B: Oh no. How bad is it?
A: Tom, my physio, says no running for at least two weeks. #k2
--
B: Kitchen decisions have been made: sage green cabinets and oak worktops. #k3
A: That sounds gorgeous. Very magazine.
""")
S("s20","2026-04-06","Priya","Sam","""
A: I've deferred Manchester. I'm going to do the Chester Marathon in October instead. #k1
B: Sensible. Better than limping round.
--
B: The worktops arrived cracked, so the whole kitchen is delayed another two weeks. #k2
A: Nightmare. Are you still washing up in the bath?
B: Don't.
--
A: Also, Gordon's leaving. He's going to a competitor at the end of the month. #k3
B: Your team lead? Who's replacing him?
A: Nobody yet. Which is interesting...
""")
S("s21","2026-04-27","Priya","Sam","""
A: I applied for Gordon's job. The interview's next week. #k1
B: Yes! About time.
--
B: The kitchen is DONE. Finished on Friday the 24th. #k2
A: Finally! What was the final damage?
B: £15,800 all in. Don't tell Hannah I called it damage. #k3
--
B: We're having people over on May 9th to christen it. You and Arjun are coming. #k4
A: Wouldn't miss it.
""")
S("s22","2026-05-18","Priya","Sam","""
A: I got it! I'm the new team lead from June 1st. #k1
B: Amazing! Told you.
--
A: Arjun hasn't stopped talking about your lamb tagine since the dinner. #k2
B: Ha, tell your boyfriend the secret is preserved lemons. #k4
--
B: My wife Hannah started at the landscape architecture firm last week, so mornings are chaos. #k3
A: How's she finding it?
B: She loves it. Came home talking about drainage for an hour.
""")
S("s23","2026-06-22","Priya","Sam","""
A: I'm back running! Did a 10k on Saturday in 52 minutes and the calf held up fine. #k1
B: That's quick for someone who was injured!
--
B: We've booked St Ives for the last two weeks of August. Ella wants to see seals. #k2
A: Cornwall in August, brave with the traffic.
--
A: Also Arjun and I adopted a rabbit. Her name is Biscuit. #k3
B: A rabbit! Does she live indoors?
A: She rules the living room.
""")
S("s24","2026-08-31","Priya","Sam","""
B: We're back from St Ives. Ella saw her seals, but she also got stung by a jellyfish on the beach. #k1
A: Oh poor thing! Is she okay?
B: Dramatic but fine. Vinegar and ice cream.
--
A: Chester is on October 4th and I've built back up to sixteen miles. #k2
B: You're actually going to do this.
--
A: And I hired my first person! Femi, a data analyst, starts next Monday. #k3
B: Look at you, Team Lead.
""")

# ---- Pair 4: Carlos & Ines (old university friends, Spain) ----
S("s25","2026-01-20","Carlos","Ines","""
A: I handed in my notice at the accounting firm today. I'm really doing the bakery. #k1
B: Carlos! Finally. Where?
A: A little corner unit on Calle Feria in Seville. It's going to be called Miga. #k2
B: Miga, like crumbs. I love it.
--
B: Meanwhile my PhD is basically me watching octopus videos all day. #k3
A: Are you still up in Vigo?
B: Still in Vigo, still at the marine station, still smelling of seawater. #k4
""")
S("s26","2026-02-03","Carlos","Ines","""
A: The bank approved the loan. Thirty-five thousand euros. #k1
B: That's huge! Are you celebrating?
A: I'm panicking, which is a kind of celebrating.
--
B: My supervisor, Dr. Beatriz Lozano, wants me to present the octopus work at a conference in Bergen in June. #k2
A: Norway! Fancy.
B: It's a big conference, I'm nervous already.
""")
S("s27","2026-02-24","Carlos","Ines","""
A: We have an opening date: April 4th. #k1
B: I'm putting it in my calendar right now.
--
A: And I hired my first baker. Lucía, she trained in Paris and her croissants are ridiculous. #k2
B: Poached from Paris, very fancy.
--
B: My boyfriend Marco's mum invited us to Bologna for Easter, so I'll miss your opening week. #k3
A: Meeting the family! That's serious.
B: She's already asking about grandchildren.
""")
S("s28","2026-03-17","Carlos","Ines","""
A: Bad news, the opening's pushed to April 18th. The oven failed its gas inspection. #k1
B: Oh no. But two weeks isn't too bad.
A: And it means you can come now!
B: I'll be back from Italy by then. I'm coming.
--
B: The conference dates are confirmed, June 8th to 11th. #k2
A: Norway in June, you'll get the endless evenings.
--
A: Lucía and I finally nailed the signature loaf: olive oil and orange. #k3
B: Save me one.
""")
S("s29","2026-04-21","Carlos","Ines","""
A: We opened! We sold out of croissants by 11 on the first morning. #k1
B: I told you! It was so packed when I came by.
--
B: I have news too. Marco proposed, up in the hills outside Bologna at Easter. #k2
A: INES! Congratulations!
B: We're thinking of getting married next summer, in Bologna. #k3
""")
S("s30","2026-05-19","Carlos","Ines","""
A: I've had to hire someone for the counter, Tomás. Lucía can't bake and serve at the same time. #k1
B: Growing already.
--
A: Also we're closed on Mondays now. I need one day to sleep. #k2
B: Very healthy.
--
B: My paper was accepted! The octopus camouflage one, in Marine Biology. #k3
A: Dr. Ines, nearly.
""")
S("s31","2026-06-16","Carlos","Ines","""
B: Back from Bergen. My talk won the best student presentation prize! #k1
A: Of course it did. How was Norway?
B: Rainy, but we hiked up Mount Fløyen on the last day and the view was unreal. #k2
--
A: Big plan: a second Miga in Triana next year. #k3
B: An empire!
""")

# ---- Pair 5: Hana & Theo (neighbours) ----
S("s32","2026-04-04","Hana","Theo","""
B: I got let go from Brightway yesterday. The whole logistics planning team, actually. #k1
A: Oh Theo, I'm so sorry. That's awful.
B: Honestly I'd seen it coming. Still stings.
--
A: Come over and help me in the garden, it'll take your mind off it. I've got twelve San Marzano tomato plants to get in. #k2
B: Twelve? Are you opening a pizzeria?
--
B: How's work been?
A: Being a pharmacist in April is bliss. Flu season's over and the queues are normal again. #k3
""")
S("s33","2026-04-18","Hana","Theo","""
B: I've got an interview! Ridgeline, the bike manufacturer, on the 22nd. #k1
A: That's perfect for you, you love bikes.
--
A: Aiko turns seven on May 3rd and she wants a party "with ropes". #k2
B: Ropes? Like a climbing wall?
A: I think so. Or a pirate ship. Unclear.
""")
S("s34","2026-05-02","Hana","Theo","""
B: Didn't get Ridgeline. They went with an internal candidate. #k1
A: Their loss. Anything else lined up?
B: The city council's transport planning team. Interview on Thursday. #k2
--
A: Aiko's party is sorted, we're doing it at the climbing gym on Stanley Road. #k3
B: Ropes achieved!
--
A: And thank you again for building the raised bed. I can't believe it's made from old pallets. #k4
B: Reclaimed wood, zero pounds, only a little bit of splinter blood.
""")
S("s35","2026-05-23","Hana","Theo","""
B: I got the council job! Transport planner, I start on June 8th. #k1
A: Theo!! That's wonderful.
--
A: The party was chaos. Fourteen kids on a climbing wall, and a dinosaur cake. #k2
B: Was the cake a T-rex?
A: A stegosaurus. Aiko was very specific. #k3
""")
S("s36","2026-06-20","Hana","Theo","""
A: Blight got the tomatoes. I had to pull out five of the plants. #k1
B: Oh no, after all that work.
--
B: The commute's great though. I'm doing it on the e-bike, twenty-five minutes door to door. #k2
A: Better than the bus.
--
A: Kenji's going to Osaka for all of July to be with his dad after the surgery. #k3
B: That's a long time on your own. Let me know if you need help with Aiko.
""")
S("s37","2026-07-18","Hana","Theo","""
B: My sister Rosa is coming over from Valencia next week. First visit in two years. #k1
A: Bring her over for dinner!
--
A: Look, the surviving tomatoes came through. I made four jars of passata. #k2
B: Save me one, I'll trade you lemons.
--
B: First proper project at work: redesigning the bus lanes on Mill Road. #k3
A: Please fix the junction by the library.
""")
S("s38","2026-08-15","Hana","Theo","""
A: Kenji's back from Osaka and he brought me a beautiful tea set. #k1
B: How's his dad doing?
A: Much better, he's walking on his own again. #k4
--
B: I adopted a cat! She's called Pepper, a tabby from the rescue. #k2
A: Finally a pet on this street that doesn't dig up my garden.
--
A: Are we still doing the street party on September 12th? #k3
B: Yes, I've already asked the council about closing the road.
""")

# ---- Pair 6: Zoe & Malik (friends) ----
S("s39","2026-09-05","Zoe","Malik","""
A: I accepted the offer from the museum in Edinburgh. I'll be curating the textiles collection. #k1
B: Zoe, that's your dream job!
A: I move up there on October 1st. #k2
--
B: Wedding update: we've picked a venue, a barn outside Harrogate. #k3
A: A barn! Very romantic.
B: June 19th next year, save the date. #k4
""")
S("s40","2026-09-19","Zoe","Malik","""
A: Found a flat in Leith, top floor, with a view of the docks. #k1
B: Leith is lovely. Is it far from work?
A: Twenty minutes on the tram. #k4
--
B: My fiancée Amira wants a ceilidh band at the wedding, so I'm having dance lessons. #k2
A: I need video evidence.
--
B: We had to change the venue though. The barn double-booked us, so now it's a hotel in York, same date. #k3
A: Nightmare, but York is beautiful.
""")
S("s41","2026-10-10","Zoe","Malik","""
A: First week at work done. My boss, Fiona, gave me a tour of the storage vaults. #k1
B: Sounds very Indiana Jones.
--
B: Amira and I did our cake tasting. We picked lemon and elderflower. #k2
A: Classy.
--
A: I've joined a wild swimming group that goes in at Portobello beach on Sunday mornings. #k3
B: In October? You're mad.
""")
S("s42","2026-11-07","Zoe","Malik","""
B: We booked the honeymoon! Two weeks in Japan, Tokyo first and then Kyoto. #k1
A: Amazing! When do you go?
B: Straight after the wedding. We fly out on June 21st. #k2
--
A: I'm going home to Cardiff for my mum's birthday later this month. #k3
B: Say hi to her from me.
--
A: Also, the exhibition I'm working on opens in March. It's all about the history of Scottish tartan. #k4
B: I'll come up for it, promise.
""")
QUESTIONS = []
def Q(q, ev, kind):
    QUESTIONS.append((q, ev, kind))
# Maya & Omar
Q("Where did Maya say her sister moved for her new job?",["s01#k2"],"place")
Q("What's the name of the cat Maya adopted?",["s01#k3"],"name")
Q("Who was Omar originally going to take on his Lisbon trip?",["s01#k1"],"temporal")
Q("Who ended up going to Lisbon with Omar instead of his cousin?",["s03#k1"],"temporal")
Q("What's the name of Omar's cousin?",["s01#k1"],"name")
Q("Which company does Omar work for?",["s01#k4"],"name")
Q("What camera did Omar buy before his trip to Lisbon?",["s02#k1"],"single_hop")
Q("What's the name of the studio where Maya takes pottery, and which night does she go?",["s02#k2"],"name")
Q("Which part of the hospital was Maya working in back in January?",["s02#k3"],"paraphrase")
Q("What were the new dates of Omar's Lisbon trip after it was rescheduled?",["s03#k2"],"date")
Q("What did Daniel prepare ahead of the Lisbon trip?",["s03#k5"],"paraphrase")
Q("Why did Maya have to take her cat to the emergency vet?",["s03#k3"],"paraphrase")
Q("How much did Pickle's emergency vet visit cost?",["s03#k4"],"single_hop")
Q("How old did Maya turn in February, and on what day?",["s04#k1"],"date")
Q("Who surprised Maya for her birthday, and where did she fly in from?",["s04#k2"],"single_hop")
Q("Where did Maya and her sister go out on her birthday?",["s04#k3"],"place")
Q("What language was Omar practising before his holiday, and how long was his streak?",["s04#k4"],"single_hop")
Q("What promotion did Maya apply for in March?",["s05#k1"],"single_hop")
Q("By how much was Omar's rent going up?",["s05#k2"],"single_hop")
Q("Which Lisbon neighbourhood did Omar book his apartment in?",["s05#k3"],"place")
Q("What was the highlight of Omar's Lisbon holiday?",["s06#k1"],"paraphrase")
Q("Where did Omar queue for custard tarts?",["s06#k2"],"place")
Q("Where did Omar lose his sunglasses?",["s06#k3"],"place")
Q("When did Maya start in her new role as charge nurse?",["s06#k4"],"date")
Q("Did Maya get the job she applied for in March, and when did she start it?",["s05#k1","s06#k4"],"multi_hop")
Q("How did Maya's working hours change after her promotion compared with January?",["s02#k3","s07#k1"],"temporal")
Q("When did Omar move into his new flat?",["s07#k2"],"date")
Q("Why did Omar end up moving to Headingley?",["s05#k2","s07#k2"],"multi_hop")
Q("Where and when is Karim getting married, and what's Omar's role?",["s07#k3"],"single_hop")
Q("Where are Maya and Nadia going together in August?",["s08#k1"],"place")
Q("How much weight does the vet want Pickle to lose?",["s08#k2"],"single_hop")
Q("Where is Omar exhibiting his Lisbon photographs, and when does it open?",["s08#k3"],"date")
Q("Which city does the sister Maya is travelling to Porto with live in?",["s01#k2","s08#k1"],"multi_hop")
# Lena & Jakob
Q("Which neighbourhood was Lena originally going to move to in March?",["s09#k1"],"temporal")
Q("Where did Lena actually move, and on what date?",["s11#k2"],"date")
Q("Why did Lena's first flat fall through?",["s11#k1"],"paraphrase")
Q("What breed is Jakob's dog Otto?",["s09#k2"],"single_hop")
Q("What subject does Jakob teach?",["s09#k3"],"paraphrase")
Q("When is Lena and Jakob's mother's sixtieth birthday?",["s09#k4"],"date")
Q("Which restaurant did Jakob suggest for their mum's surprise dinner?",["s10#k1"],"place")
Q("How much did Lena pay for her cargo bike?",["s10#k2"],"single_hop")
Q("What's Lena's job, and which company does she do it for?",["s10#k3"],"name")
Q("Whose van did they borrow for Lena's move?",["s11#k3"],"name")
Q("What did Lena's downstairs neighbour do for a living before she retired?",["s12#k1"],"paraphrase")
Q("Where was Jakob originally taking his year nines in May?",["s12#k2"],"place")
Q("Which relative came from abroad for their mum's party, and from which city?",["s13#k1"],"single_hop")
Q("What birthday present did Lena and Jakob give their mum?",["s13#k2"],"single_hop")
Q("What's the name of the second dog Jakob adopted?",["s14#k1"],"name")
Q("What breeds are Jakob's two dogs?",["s09#k2","s14#k1"],"multi_hop")
Q("Who gives Lena piano lessons, and what did that person do before retiring?",["s12#k1","s14#k2"],"multi_hop")
Q("What new title did Lena get at work in May?",["s14#k3"],"single_hop")
Q("Who is Lena going to Iceland with, and for how long?",["s15#k1"],"name")
Q("Jakob's Cornwall school trip was first planned for which month, and when did it finally happen?",["s12#k2","s15#k2"],"temporal")
Q("Why was the Eden Project trip postponed?",["s15#k2"],"paraphrase")
Q("What school does Jakob teach at?",["s15#k3"],"name")
Q("Where did Lena see puffins?",["s16#k1"],"place")
Q("What job did Jakob apply for in July?",["s16#k2"],"single_hop")
Q("When is their mum using the weekend away she got for her birthday?",["s13#k2","s16#k3"],"multi_hop")
# Priya & Sam
Q("Which marathon did Priya first sign up for, and when was it?",["s17#k1"],"temporal")
Q("Who is building Sam's new kitchen?",["s17#k2"],"name")
Q("Which city does Sam live in?",["s17#k4"],"place")
Q("When does Sam's daughter start nursery?",["s17#k3"],"date")
Q("On which day of the week does Priya do her long runs?",["s18#k1"],"single_hop")
Q("What budget did Sam and Hannah set for the kitchen?",["s18#k2"],"single_hop")
Q("What's the name of Priya's running club?",["s18#k3"],"name")
Q("When and where does Priya's running club train?",["s18#k4"],"single_hop")
Q("How did Priya get hurt in March?",["s19#k1"],"paraphrase")
Q("What's the name of Priya's physio, and how long did he tell her to stop running?",["s19#k2"],"name")
Q("What did Sam choose for his kitchen cabinets and worktops?",["s19#k3"],"single_hop")
Q("Which race did Priya switch to after her injury?",["s20#k1"],"temporal")
Q("Why was Sam's kitchen delayed in April?",["s20#k2"],"paraphrase")
Q("Who announced they were leaving Priya's company, and where were they going?",["s20#k3"],"name")
Q("How much did Sam's kitchen end up costing compared with the budget they set?",["s18#k2","s21#k3"],"multi_hop")
Q("On what date was Sam's kitchen finished?",["s21#k2"],"date")
Q("When was Sam's dinner to show off the new kitchen?",["s21#k4"],"date")
Q("Whose job did Priya apply for, and did she get it?",["s21#k1","s22#k1"],"multi_hop")
Q("When did Priya start as team lead?",["s22#k1"],"date")
Q("What dish did Sam cook for the dinner, and what's his secret ingredient?",["s22#k2","s22#k4"],"multi_hop")
Q("What is the name of Priya's boyfriend?",["s22#k2","s22#k4"],"name")
Q("Where did Sam's wife start working in May?",["s22#k3"],"single_hop")
Q("How long did it take Priya to run 10k in June?",["s23#k1"],"single_hop")
Q("Where did Sam's family go on holiday in August?",["s23#k2"],"place")
Q("What pet did Priya and Arjun get, and what's its name?",["s23#k3"],"name")
Q("What happened to Ella on the beach on holiday?",["s24#k1"],"paraphrase")
Q("When is the Chester Marathon?",["s24#k2"],"date")
Q("Who was the first person Priya hired as team lead, and for what role?",["s24#k3"],"name")
# Carlos & Ines
Q("What job did Carlos quit to open his bakery?",["s25#k1"],"single_hop")
Q("What is Carlos's bakery called, and what street is it on?",["s25#k2"],"name")
Q("What animal is Ines's PhD about?",["s25#k3"],"paraphrase")
Q("In which city is Ines doing her PhD research?",["s25#k4"],"place")
Q("How much money did the bank lend Carlos?",["s26#k1"],"single_hop")
Q("Who supervises Ines's PhD?",["s26#k2"],"name")
Q("In which city is the conference where Ines is presenting?",["s26#k2"],"place")
Q("What was the bakery's original opening date?",["s27#k1"],"temporal")
Q("Who was the first baker Carlos hired, and where did she train?",["s27#k2"],"name")
Q("Why did Ines originally expect to miss the bakery's opening week?",["s27#k3"],"paraphrase")
Q("Why was the bakery's opening postponed?",["s28#k1"],"paraphrase")
Q("On what date did Carlos's bakery actually open?",["s28#k1","s29#k1"],"temporal")
Q("What are the dates of the conference in Norway?",["s28#k2"],"date")
Q("What flavour is the bakery's signature loaf?",["s28#k3"],"single_hop")
Q("Which baker helped create the orange loaf, and where did she learn her trade?",["s27#k2","s28#k3"],"multi_hop")
Q("What had sold out by 11 on the bakery's first morning?",["s29#k1"],"single_hop")
Q("Where did Marco propose to Ines?",["s29#k2"],"place")
Q("When and where are Ines and Marco thinking of getting married?",["s29#k3"],"date")
Q("Who did Carlos hire to work the counter?",["s30#k1"],"name")
Q("Which day of the week is Carlos's bakery closed?",["s30#k2"],"single_hop")
Q("What was Ines's accepted paper about, and which journal took it?",["s30#k3"],"single_hop")
Q("What prize did Ines win at her conference?",["s31#k1"],"single_hop")
Q("Where did Ines go hiking in Norway?",["s31#k2"],"place")
Q("Where does Carlos want to open a second bakery?",["s31#k3"],"place")
# Hana & Theo
Q("Which company laid Theo off?",["s32#k1"],"name")
Q("What variety of tomatoes is Hana growing, and how many plants did she start with?",["s32#k2"],"single_hop")
Q("What does Hana do for work?",["s32#k3"],"paraphrase")
Q("Which company did Theo first interview with, and on what date?",["s33#k1"],"date")
Q("When is Aiko's birthday, and how old is she turning?",["s33#k2"],"date")
Q("Why didn't Theo get the bike company job?",["s34#k1"],"paraphrase")
Q("Where was Aiko's birthday party held?",["s34#k3"],"place")
Q("What did Theo build Hana's raised bed out of?",["s34#k4"],"paraphrase")
Q("What job did Theo land, and when did he start?",["s35#k1"],"date")
Q("How many children came to Aiko's party?",["s35#k2"],"single_hop")
Q("What kind of dinosaur was Aiko's birthday cake?",["s35#k3"],"single_hop")
Q("How many of Hana's tomato plants were left after the blight?",["s32#k2","s36#k1"],"multi_hop")
Q("How does Theo get to work, and how long does it take?",["s36#k2"],"paraphrase")
Q("Why did Kenji go to Osaka in July?",["s36#k3"],"single_hop")
Q("What's the name of Hana's husband?",["s36#k3"],"name")
Q("Who is visiting Theo in late July, and where is she coming from?",["s37#k1"],"place")
Q("What did Hana make with the tomatoes that survived?",["s37#k2"],"single_hop")
Q("What is Theo's first big project at the council?",["s37#k3"],"single_hop")
Q("What did Kenji bring back from Japan?",["s38#k1"],"single_hop")
Q("How was Kenji's father doing by mid-August?",["s36#k3","s38#k4"],"temporal")
Q("What's the name of the cat Theo adopted?",["s38#k2"],"name")
Q("When is the street party Hana and Theo are planning?",["s38#k3"],"date")
Q("Where did Theo work before he joined the council?",["s32#k1","s35#k1"],"multi_hop")
# Zoe & Malik
Q("What job did Zoe accept in Edinburgh?",["s39#k1"],"single_hop")
Q("When is Zoe moving to Edinburgh?",["s39#k2"],"date")
Q("Where was Malik's wedding venue originally going to be?",["s39#k3"],"temporal")
Q("Where is Malik's wedding being held now, and why did it change?",["s40#k3"],"temporal")
Q("What date is Malik's wedding?",["s39#k4"],"date")
Q("Which part of Edinburgh did Zoe find a flat in?",["s40#k1"],"place")
Q("How does Zoe get to work from her new flat?",["s40#k4"],"paraphrase")
Q("Why is Malik taking dance lessons?",["s40#k2"],"paraphrase")
Q("What's the name of Malik's fiancée?",["s40#k2"],"name")
Q("Who is Zoe's boss at the museum?",["s41#k1"],"name")
Q("What wedding cake flavour did Malik and Amira choose?",["s41#k2"],"single_hop")
Q("Where does Zoe go wild swimming, and when?",["s41#k3"],"place")
Q("Where are Malik and Amira going on their honeymoon?",["s42#k1"],"place")
Q("What day do Malik and Amira fly out on their honeymoon?",["s42#k2"],"date")
Q("How many days after the wedding do Malik and Amira leave for their honeymoon?",["s39#k4","s42#k2"],"multi_hop")
Q("Which city is Zoe's family home in?",["s42#k3"],"place")
Q("What is Zoe's exhibition about, and when does it open?",["s42#k4"],"single_hop")
Q("How long is Lena's Iceland trip?",["s15#k1"],"single_hop")
Q("What was Jakob considering getting for Otto in April?",["s13#k3"],"paraphrase")
Q("After the bike company turned him down, which employer did Theo interview with next?",["s34#k2"],"multi_hop")
# ---------------- filler (generic small talk, carries no answerable facts) ----------------
FILLER = [
"Is it still grey where you are?||Grey and drizzly, the usual. I've forgotten what the sun looks like.",
"Did you sleep at all last night?||About five hours. The people upstairs had a very loud argument about a fridge.",
"What are you having for dinner tonight?||Honestly, toast. It's been that kind of day.",
"Have you watched anything good lately?||I started a detective series but I keep falling asleep before the twist.",
"I need a new podcast, any ideas?||I've been listening to one about the history of everyday objects. Weirdly gripping.",
"How's your week going?||Long. It's only Wednesday in my head and I'm already counting down.",
"My phone battery is dead by lunchtime now.||Mine too. I'm convinced they're designed to give up after two years.",
"Did you hear that storm last night?||I heard it more than saw it. The windows were rattling.",
"I finally cleaned the oven.||Brave. Mine is a no-go zone.",
"Are you doing anything at the weekend?||Nothing planned, which is exactly the plan.",
"I tried that new coffee place near the station.||Any good?||Fine, but that much for a latte is criminal.",
"Have you read anything good recently?||I'm halfway through a very thick historical novel. Slow, but I like it.",
"The supermarket had no oat milk again.||There's a national shortage of everything I actually want.",
"I keep meaning to go to the gym.||Same. I've been paying for it like it's a charity donation.",
"How's the traffic been your way?||Roadworks everywhere. They dig the same hole every six months.",
"I bought a houseplant and it already looks sad.||Too much water, probably. That's how I've killed all of mine.",
"Any plans for Friday night?||Probably a takeaway and an early night. Living the dream.",
"My laptop keeps freezing.||Have you tried turning it off and throwing it out of the window?",
"Have you heard that album everyone's talking about?||A bit of it. It's growing on me slowly.",
"I've started going for a walk at lunch.||Good idea. I just eat at my desk like a gremlin.",
"The heating in my building is playing up again.||Blankets and tea, that's all you can do.",
"What time did you get up this morning?||Half six, for no reason at all. My body just decided.",
"I made a huge pot of soup to last the week.||Very organised. I'd have eaten it all by Tuesday.",
"Do you ever stare at your to-do list and then do none of it?||Every single day. It's practically a hobby.",
"I've been trying to drink more water.||How's that going?||I've had one glass and I'm very proud of it.",
"My inbox is completely out of control.||Declare inbox bankruptcy and start again. Works for me.",
"I think I need new glasses, everything's blurry after lunch.||Or you need a nap. Could be either.",
"Random question: tea or coffee in the afternoon?||Tea. Coffee after three and I'm awake until two in the morning.",
"The lift at work broke again.||Free exercise. Look on the bright side.",
"I found a tenner in an old coat pocket.||Best feeling in the world.",
"I got caught in the rain without an umbrella.||Classic. It's always the one day you leave it at home.",
"Have you been sleeping any better?||A bit. I stopped looking at my phone in bed, mostly.",
"Someone at work brought in cake today.||That's the only good kind of meeting.",
"I'm thinking of finally learning to cook properly.||Start with one really good pasta dish and build from there.",
"The neighbours have been drilling since seven this morning.||On a weekend? That should be illegal.",
"I watched a documentary about bridges last night.||Only you could find bridges relaxing.",
"I reorganised my whole wardrobe by colour.||That's either very calming or a cry for help.",
"Is your internet as bad as mine today?||It keeps dropping every twenty minutes. I've restarted the router three times.",
"I've had the same song stuck in my head all day.||Which one?||Some advert jingle. I don't even know what it's selling.",
"I burnt my toast this morning. The day was doomed from then.||Toast is a good predictor, to be fair.",
"How do you stay so calm with everything going on?||I don't. I just hide it well.",
"I'm trying a new rule where I don't check emails after eight.||How many days have you lasted?||Two. Don't judge.",
"My back is killing me from that sofa.||Time for a new sofa or a new back.",
"I bought way too many snacks at the shop.||There's no such thing as too many snacks.",
"Do you remember when we used to stay up all night?||Now I'm in bed by ten and I love it.",
"I've started doing a crossword every morning.||Are you any good?||I get about half. The other half are sports clues.",
"What's the best thing you've eaten this week?||Honestly, a really good cheese sandwich. Simple pleasures.",
"I'm so behind on laundry.||The laundry chair is a lifestyle, not a failure.",
"My car made a weird noise this morning.||The expensive kind of weird or the ignore-it kind?||I'm choosing to ignore it.",
"I've been trying to read before bed instead of scrolling.||Does it work?||I fall asleep after three pages, so technically yes.",
"The bin collection didn't come again.||Ours skipped us too. Very mysterious.",
"I can't believe how expensive everything is now.||I looked at the price of butter today and had to sit down.",
"I think I'm coming down with a cold.||Honey, lemon, and a lot of sofa.",
"What are you listening to at the moment?||A lot of old soul records. Very soothing.",
"I rearranged the living room furniture.||Does it look better?||Different. I'm calling that better.",
"My screen time report this week was embarrassing.||Mine sends me a notification and I ignore that too.",
"Every meeting today could have been an email.||Every meeting ever could have been an email.",
"Did you finish that book you were reading?||Not yet, I keep starting other ones.",
"The kettle broke so I've been boiling water in a pan.||That's very camping chic.",
"I accidentally replied-all to the whole office today.||Oh no. What did it say?||Just 'thanks!' but still, mortifying.",
"Do you ever miss living with flatmates?||I miss the chats, not the washing up.",
"I ate lunch at four today, that's how busy it was.||That's not lunch, that's early dinner.",
"Remind me never to buy cheap shoes again.||Blisters?||Everywhere.",
"I got a parking ticket for being two minutes late.||Two minutes! That's daylight robbery.",
"I need a hobby that doesn't involve a screen.||Jigsaws. Very underrated.",
"Our work group chat has become entirely memes.||That's how you know it's a good team.",
"I've been drinking far too much coffee.||Same. My hands are basically vibrating.",
"I tried meditating this morning.||How did it go?||I spent ten minutes thinking about what to have for lunch.",
"The shop was out of everything on my list.||Did you at least get chocolate?||Obviously. Priorities.",
"I found my old diary from school.||Did you read it?||A few pages. I was extremely dramatic.",
"I had the weirdest dream last night.||Go on.||I was late for an exam in a subject that doesn't exist.",
"Have you tried that new sandwich place yet?||Not yet, the queue is always round the corner.",
"Sorry I'm so bad at replying to messages.||Don't worry, I'm no better.",
"My printer has decided it hates me.||Printers hate everyone. It's not personal.",
"I'm going to bed early tonight, I promise.||You say that every night.||And tonight I mean it.",
"I've started keeping a gratitude journal.||That's lovely. What did you write today?||Good coffee and a quiet commute.",
"The weather forecast was wrong again.||They just guess, I'm convinced of it.",
"I watched three episodes in a row last night.||That's not a lot. That's just a normal evening.",
"My hands are freezing, the office is like a fridge.||Ours is either a sauna or a fridge, never anything in between.",
"I've decided I'm a morning person now.||Since when?||Since yesterday. Let's see how long it lasts.",
"I keep losing my keys.||Get one of those little tracker tags.",
"Someone parked across my driveway this morning.||I'd have left a very passive-aggressive note.",
"Do you ever just eat cereal for dinner?||At least twice a week, no shame.",
"I signed up for one newsletter and now I get ten emails a day.||The unsubscribe button is very satisfying, trust me.",
"I'm trying to spend less on takeaways.||How's it going?||Badly. The app knows my weaknesses.",
"I finally fixed the wobbly table.||With actual tools or a folded-up receipt?||Folded-up receipt, obviously.",
"My group chat has been arguing about pineapple on pizza for two days.||That argument will never be settled.",
"How are you feeling today, honestly?||A bit tired, but good. You?||Same, really.",
"I've been doing stretches every morning.||Is it helping?||My knees still sound like popcorn, but yes.",
"I spent an hour choosing a new phone case.||Did you pick a good one?||I picked the first one I looked at.",
"Why is everything on my street being dug up at once?||Same here. I think it's a competition.",
"I left my lunch on the counter at home again.||The saddest feeling of the working day.",
"Do you still do that thing where you leave every cupboard door open?||Only when I'm stressed. So, yes.",
]
OPEN = [
"Hey, got a minute?||Always. What's up?",
"Morning! How are you?||Alive, just about. You?",
"Hiya, long time no speak!||I know, sorry, it's been hectic.",
"Are you free for a quick catch-up?||Yes, go on, I need a distraction.",
"Hello hello.||Hey you! Good timing, I'm on a break.",
"How's things?||Not bad at all. You first.",
"Hey, I was just thinking about you.||Uh oh. Good things, I hope?",
"Evening! Survived the day?||Barely. Talk to me.",
"Hi! Is now a good time?||Perfect time, I've just put the kettle on.",
"There you are!||Here I am. Sorry, my phone was on silent all day.",
"You around?||Yep, just finished work.",
"Quick one, are you busy?||Never too busy for you. What's new?",
]
CLOSE = [
"Right, I'd better go and make dinner.||Go! Speak soon.",
"I have to run, but this was nice.||It was. Let's not leave it so long next time.",
"Okay, my battery's about to die.||Ha, go charge it. Talk soon.",
"I should get some sleep.||Me too. Night!",
"Sorry, someone's at the door, gotta go.||No worries, catch you later.",
"Anyway, back to the grind.||Good luck! Message me later.",
"Let's catch up again next week?||Definitely. Same time?",
"I'll let you go. Take care of yourself.||You too. Bye for now.",
"Right, I'm going to attempt some chores.||Good luck with that. Bye!",
"My break's over, I'd better head back.||Go on then. Speak soon!",
]

import json, os, random, re

def parse(text):
    blocks, cur = [], []
    for line in text.strip().splitlines():
        line = line.strip()
        if not line: continue
        if line == "--":
            blocks.append(cur); cur = []; continue
        who, rest = line.split(": ", 1)
        m = re.search(r" #(k\d+)$", rest)
        key = None
        if m:
            key = m.group(1); rest = rest[:m.start()]
        cur.append((who, rest, key))
    if cur: blocks.append(cur)
    return blocks

def exchange(s, first):
    parts = s.split("||")
    return [(first if i % 2 == 0 else ("B" if first == "A" else "A"), p, None) for i, p in enumerate(parts)]

def main(outdir):
    rng = random.Random(20261202)
    pools = {}
    turns, keymap = [], {}
    for sid, date, a, b, text in SESSIONS:
        pair = (a, b)
        if pair not in pools:
            pools[pair] = {"f": [], "o": [], "c": []}
        P = pools[pair]
        def take(name, src):
            if not P[name]:
                P[name] = src[:]; rng.shuffle(P[name])
            return P[name].pop()
        blocks = parse(text)
        target = rng.randint(29, 34)
        hand = sum(len(bl) for bl in blocks)
        n_fill = max(0, target - hand - 4)
        # distribute filler exchanges over the gaps between blocks
        gaps = len(blocks) + 1
        seq = []
        seq += exchange(take("o", OPEN), rng.choice("AB"))
        fills = [[] for _ in range(gaps)]
        count = 0
        while count < n_fill:
            ex = exchange(take("f", FILLER), rng.choice("AB"))
            # news usually comes early in a chat: at most one filler exchange before the first topic
            g = rng.randrange(gaps)
            if g == 0 and (fills[0] or rng.random() < 0.6):
                g = rng.randrange(1, gaps)
            fills[g].append(ex)
            count += len(ex)
        for gi in range(gaps):
            for ex in fills[gi]:
                seq += ex
            if gi < len(blocks):
                seq += blocks[gi]
        seq += exchange(take("c", CLOSE), rng.choice("AB"))
        for i, (who, txt, key) in enumerate(seq, 1):
            tid = "%s-t%03d" % (sid, i)
            turns.append({"id": tid, "session": sid, "date": date, "speaker": a if who == "A" else b, "text": txt})
            if key:
                k = "%s#%s" % (sid, key)
                assert k not in keymap, k
                keymap[k] = tid
    with open(os.path.join(outdir, "turns.jsonl"), "w") as f:
        for t in turns:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    with open(os.path.join(outdir, "questions.jsonl"), "w") as f:
        for i, (q, ev, kind) in enumerate(QUESTIONS, 1):
            f.write(json.dumps({"id": "q%03d" % i, "question": q, "evidence": [keymap[e] for e in ev], "kind": kind}, ensure_ascii=False) + "\n")
    used = {e for _, ev, _ in QUESTIONS for e in ev}
    print("turns", len(turns), "sessions", len(SESSIONS), "questions", len(QUESTIONS), "unused evidence keys", sorted(set(keymap) - used))

if __name__ == "__main__":
    main(os.path.dirname(os.path.abspath(__file__)))
